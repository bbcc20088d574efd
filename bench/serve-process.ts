// `sessync serve` as its own process for the benches, as users run it (client and server then do not share one thread).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Listens on loopback on a free port; `close` stops it with SIGTERM and waits for it to exit. */
export async function startServe(dataDir: string): Promise<{ url: string; token: string; cpuMs(): number | null; close(): Promise<void> }> {
  const bin = fileURLToPath(new URL('../cli/bin.mjs', import.meta.url));
  const child = spawn(process.execPath, [bin, 'serve', '--json', '--port', '0', '--data', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sessync serve exited with ${code}`)));
  });
  const { url, token } = JSON.parse(first) as { url: string; token: string };
  return {
    url,
    token,
    cpuMs: () => processCpuMs(child.pid),
    close: () => new Promise<void>((r) => (child.exitCode !== null ? r() : (child.once('exit', () => r()), child.kill('SIGTERM')))),
  };
}

/** User + system CPU of a process so far, from /proc (Linux); null where there is none. */
function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null; // not Linux, or the process is gone: the bench prints no server CPU
  }
}

