// pi's two folders: pi's own and sessync's store beside it are read as one, each session known by its id in either.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { sessyncHome } from './paths.js';
import type { SessionSummary } from './session-index.js';
import { piFolderHere, piSessionsRoot } from '../agents/pi-paths.js';

/**
 * How sessionsRoot(env) is read: the other folders read with it, whether it is pi's flat sessionDir, and the env
 * itself, whose SESSYNC_HOME keeps the caches of whatever reads the folders with this layout.
 */
export interface PiLayout {
  also: string[];
  flat?: true;
  env: NodeJS.ProcessEnv;
}

/**
 * How to read sessionsRoot(env): with pi's folder the main one, sessync's own store is read too (sessions synced
 * before pi was set up here stay there and keep syncing); new sessions land in pi's. --sessions-dir /
 * SESSYNC_SESSIONS_DIR mean one folder only.
 */
export function piLayout(env: NodeJS.ProcessEnv): PiLayout {
  if (env.SESSYNC_SESSIONS_DIR && env.SESSYNC_SESSIONS_DIR.length > 0) return { also: [], env };
  const pi = piFolderHere(env);
  if (!pi) return { also: [], env };
  // With pi's sessionDir chosen, pi's default folder may still hold the sessions it wrote before: read it too.
  const others = [...(pi.flat ? [piSessionsRoot(env)] : []), join(sessyncHome(env), 'sessions')];
  const also = others.filter((d) => d !== pi.root && statSync(d, { throwIfNoEntry: false })?.isDirectory());
  return { also, ...(pi.flat ? { flat: true as const } : {}), env };
}

/** What to tell the user about pi's folder before a run (an unusable settings file), or null. */
export function piFolderProblem(env: NodeJS.ProcessEnv): string | null {
  if (env.SESSYNC_SESSIONS_DIR && env.SESSYNC_SESSIONS_DIR.length > 0) return null;
  return piFolderHere(env)?.problem ?? null;
}

/**
 * One row per session across folders: a session whose file sits in two of them (a user copied it) is synced from the
 * newer file (later newest entry, then later mtime, then larger), and the other copy is reported, never deleted.
 */
export function oneFilePerSession(rows: SessionSummary[], skipped?: { path: string; reason: string }[]): SessionSummary[] {
  const best = new Map<string, SessionSummary>();
  const newer = (a: SessionSummary, b: SessionSummary) => {
    const ta = Date.parse(a.lastEntryAt) || 0;
    const tb = Date.parse(b.lastEntryAt) || 0;
    return ta !== tb ? ta > tb : a.mtimeMs !== b.mtimeMs ? a.mtimeMs > b.mtimeMs : a.size > b.size;
  };
  const aside: SessionSummary[] = [];
  for (const r of rows) {
    const had = best.get(r.id);
    if (!had) best.set(r.id, r);
    else if (newer(r, had)) {
      aside.push(had);
      best.set(r.id, r);
    } else aside.push(r);
  }
  for (const r of aside) skipped?.push({ path: r.path, reason: `session ${r.id} is also in ${best.get(r.id)!.path}, the newer file, which is synced; this copy is left as it is` });
  return rows.filter((r) => best.get(r.id) === r);
}
