// Finds Codex rollouts on disk: sessions/YYYY/MM/DD/rollout-*-<uuid>.jsonl, by the adapter's naming rule.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { codex } from '../../shared/agents/codex.js';

export interface FoundRollout {
  session: string;
  /** Relative to the sessions folder. */
  rel: string;
  path: string;
}

async function dirs(dir: string, re: RegExp): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => re.test(d.name)).map((d) => d.name);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw e;
  }
}

/** Every rollout under `root`. Two files naming one session: the first by name is used, the other reported. */
export async function findRollouts(root: string, problem: (t: string) => void): Promise<FoundRollout[]> {
  const out = new Map<string, FoundRollout>();
  for (const y of await dirs(root, /^\d{4}$/))
    for (const m of await dirs(join(root, y), /^\d{2}$/))
      for (const d of await dirs(join(root, y, m), /^\d{2}$/))
        for (const f of (await dirs(join(root, y, m, d), /^rollout-.*\.jsonl$/)).sort()) {
          const rel = `${y}/${m}/${d}/${f}`;
          const session = codex.sessionOf(rel);
          if (session === null) continue;
          const path = join(root, rel);
          const had = out.get(session);
          if (had) problem(`${path}: a second rollout of session ${session} (the first is ${had.path}); not synced`);
          else out.set(session, { session, rel, path });
        }
  return [...out.values()];
}
