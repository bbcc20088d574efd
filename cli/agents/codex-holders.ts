// Which running Codex processes hold a file open (/proc, else lsof): sessync never rewrites a rollout or the index under one.
import { execFile } from 'node:child_process';
import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * Where there is no /proc (macOS): lsof's pids for the paths, kept when ps names the process codex. When lsof cannot
 * run, the answer is "held" (-1): sessync then waits rather than change a file it cannot check.
 */
function lsofHolders(paths: readonly string[]): Promise<number[]> {
  return new Promise((resolve) => {
    execFile('lsof', ['-t', '--', ...paths], { timeout: 10_000 }, (err, stdout) => {
      // lsof exits 1 when no process has any of the files open (and prints nothing): that is the all-clear.
      if (err && (err as NodeJS.ErrnoException).code !== undefined && typeof (err as { code?: unknown }).code !== 'number') return resolve([-1]);
      const pids = stdout.split('\n').map(Number).filter((n) => n > 0 && n !== process.pid);
      if (pids.length === 0) return resolve([]);
      execFile('ps', ['-o', 'pid=,comm=', '-p', pids.join(',')], { timeout: 10_000 }, (e2, out) => {
        if (e2) return resolve(pids);
        resolve(out.split('\n').filter((l) => /(^|\/)codex\s*$/.test(l.trim())).map((l) => Number(l.trim().split(/\s+/)[0])));
      });
    });
  });
}

/** Pids of running `codex` processes that have any of `paths` open (-1: cannot tell, so treat them as held). */
export async function codexHolders(paths: readonly string[]): Promise<number[]> {
  const wanted = new Set(paths);
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  } catch {
    return lsofHolders(paths);
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
