// `sessync serve` as its own process for the benches, as users run it (client and server then do not share one thread).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** Listens on loopback on a free port; `close` stops it with SIGTERM and waits for it to exit. */
export async function startServe(dataDir: string): Promise<{ url: string; token: string; close(): Promise<void> }> {
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
    close: () => new Promise<void>((r) => (child.exitCode !== null ? r() : (child.once('exit', () => r()), child.kill('SIGTERM')))),
  };
}

