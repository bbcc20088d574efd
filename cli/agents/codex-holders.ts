// Which running Codex processes hold a file open (Linux /proc): sessync never rewrites a rollout or the index under one.
import { readdir, readFile, readlink } from 'node:fs/promises';

/** Pids of running `codex` processes that have any of `paths` open; [] where /proc cannot be read. */
export async function codexHolders(paths: readonly string[]): Promise<number[]> {
  const wanted = new Set(paths);
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  } catch {
    return []; // no /proc (not Linux): nothing can be checked here
  }
  const out: number[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    const comm = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!comm.startsWith('codex') && !/(^|\/)codex(\0|$)/.test(cmd)) continue;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (wanted.has(target) || [...wanted].some((w) => target.startsWith(`${w}-`))) {
        out.push(Number(pid));
        break;
      }
    }
  }
  return out;
}
