// Runs the real bundled `sessync` binary in a child process, the way users run it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI_BIN = join(REPO_ROOT, 'cli/bin.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws when it is not). */
  json<T = any>(): T;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
  /** The command line to run instead of `node cli/bin.mjs args...`, given it (e.g. prefixed to run as another user). */
  wrap?: (argv: string[]) => string[];
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [cmd, ...argv] = (opts.wrap ?? ((a) => a))([process.execPath, CLI_BIN, ...args]);
    const child = spawn(cmd!, argv, {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json() {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
          }
        },
      });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(prefix = 'sessync-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * For in-process tests of cli/store: a fresh temp folder per test, with $SESSYNC_HOME pointing at
 * `<dir>/home` during the test and restored after. Call at the top of a describe or file.
 */
export function useTempHome(prefix: string, hooks: { beforeEach: (f: () => void) => void; afterEach: (f: () => void) => void }): { readonly dir: string } {
  const state = { dir: '' };
  let cleanup = (): void => {};
  let saved: string | undefined;
  hooks.beforeEach(() => {
    ({ dir: state.dir, cleanup } = tempDir(prefix));
    saved = process.env.SESSYNC_HOME;
    process.env.SESSYNC_HOME = join(state.dir, 'home');
  });
  hooks.afterEach(() => {
    if (saved === undefined) delete process.env.SESSYNC_HOME;
    else process.env.SESSYNC_HOME = saved;
    cleanup();
  });
  return state;
}
