// Which project each remote session belongs to, from a cache kept in sync state (a session's meta never changes once pushed).
import { isSessyncError } from '../../shared/errors.js';
import { ownValue } from '../../shared/own-keys.js';
import type { Head } from '../../shared/wire.js';
import type { SyncContext } from './sync-context.js';
import { readMeta } from '../keys/sync-keys.js';
import { fetchMetas } from './remote-metas.js';

/**
 * Remote sessions' project keys, from a cache kept in state (session meta never changes once pushed). `heads`: the
 * run's heads, so the metas not cached yet come a page of sessions per request (remote-metas.ts), not one GET each.
 */
export async function remoteProjectKeys(ctx: SyncContext, sessions: string[], heads: readonly Head[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [s, m] of await remoteMetaRows(ctx, sessions, heads)) out.set(s, m.projectKey);
  return out;
}

/** The agent each remote session's meta names (its header's `agent`; none means pi, the first format sessync synced). */
export async function remoteAgents(ctx: SyncContext, sessions: string[], heads: readonly Head[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [s, m] of await remoteMetaRows(ctx, sessions, heads)) out.set(s, m.agent ?? 'pi');
  return out;
}

async function remoteMetaRows(ctx: SyncContext, sessions: string[], heads: readonly Head[]): Promise<Map<string, { projectKey: string; agent?: string }>> {
  const cache = await ctx.state.remoteMeta();
  let dirty = false;
  const out = new Map<string, { projectKey: string; agent?: string }>();
  // A session's meta is cached once it has a project key: the others are asked for, many to a request.
  const served = await fetchMetas(ctx, sessions.filter((s) => !ownValue(cache, s)?.projectKey), heads);
  for (const s of sessions) {
    let m = ownValue(cache, s); // a session may be called `constructor`
    if (!m?.projectKey) {
      try {
        const meta = await readMeta(ctx, s, served.get(s)); // a sealed meta opened: its project key is the plaintext one
        // An older server answers a session whose meta has not landed yet with an empty key: unknown, asked again
        // next time, never cached (the meta of a session is fixed once it lands, an empty one is not).
        if (!meta.projectKey) continue;
        const header = meta.header ?? {}; // absent when the meta is sealed
        m = { projectKey: meta.projectKey, cwd: String(header.cwd ?? ''), timestamp: String(header.timestamp ?? '') };
        if (meta.name) m.name = meta.name;
        if (typeof header.agent === 'string') m.agent = header.agent;
        cache[s] = m;
        dirty = true;
      } catch (e) {
        if (isSessyncError(e, 'not_found')) continue; // heads before meta: a push in progress elsewhere
        if (isSessyncError(e, 'corrupt')) {
          // Its meta is stored damaged, so its project is unknown: named, and the run goes on with the others.
          ctx.note?.(`session ${s}: ${e.message}; not matched to a project`);
          continue;
        }
        throw e;
      }
    }
    out.set(s, m);
  }
  if (dirty) await ctx.state.saveRemoteMeta(cache);
  return out;
}
