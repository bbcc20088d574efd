// Pack-and-install rig: packs a clean copy of the checkout, installs the tarball into a temporary npm prefix,
// and runs the installed `sessync` with a PATH, cwd and environment that know nothing of the checkout.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../helpers/cli.js';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Top-level entries of the checkout that a clean clone would not have (or that are not sources). */
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', '.wrangler', 'test-artifacts', '.tmp']);

/** Whether npm can reach its registry (the install fetches the runtime dependencies from it). */
export function registryReachable(): { ok: boolean; why: string } {
  const r = spawnSync('npm', ['ping'], { encoding: 'utf8', timeout: 30_000 });
  return { ok: r.status === 0, why: r.status === 0 ? '' : (r.error?.message ?? r.stderr.trim()) || `npm ping exited with ${r.status}` };
}

/** Runs a program to its end; rejects only when it cannot start or runs past the timeout. */
export function runProgram(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} ran past ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

export function describeRun(r: Run): string {
  return `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;
}

/**
 * The parent's environment minus everything that points into the checkout: npm's lifecycle variables
 * (set when the suite runs under `npm test`, e.g. npm_config_local_prefix = the checkout), NODE_PATH,
 * and PATH entries inside any node_modules. The rest stays, npm_config_registry and the like included,
 * because the machine's registry, CA bundle or proxy settings may be what lets npm reach its registry.
 */
export function outsideEnv(extraPath: string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) && !/^npm_config_/i.test(k)) continue;
    // ignore_scripts would skip the prepack build that the test is about.
    if (/^npm_config_(prefix|local_prefix|global_prefix|global|ignore_scripts)$/i.test(k)) continue;
    if (k === 'NODE_PATH' || k === 'INIT_CWD' || k === 'PATH') continue;
    env[k] = v;
  }
  const inherited = (process.env.PATH ?? '').split(delimiter).filter((p) => p && !p.includes('node_modules') && !p.startsWith(REPO_ROOT));
  env.PATH = [...extraPath, dirname(process.execPath), ...inherited].join(delimiter);
  return env;
}

/** Copies the checkout's sources to `dir` (without dist/ or node_modules/, like a fresh clone) and links its node_modules. */
export function copyCheckout(dir: string): void {
  mkdirSync(dir, { recursive: true });
  cpSync(REPO_ROOT, dir, {
    recursive: true,
    filter: (src) => {
      const rel = src.slice(REPO_ROOT.length).replace(/^[/\\]+/, '');
      const top = rel.split(/[/\\]/)[0] ?? '';
      return !NOT_COPIED.has(top) && !/^dist\.(tmp|old)-/.test(top) && !/\.tgz$/.test(top);
    },
  });
  // The build tools (esbuild) are dev dependencies, there for packing, exactly as in a checkout after npm ci.
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/** Starts a long-running program and resolves with its first stdout line. */
export function firstLine(child: ChildProcess, what: string): Promise<string> {
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} printed nothing in 30 s; stderr:\n${err}`)), 30_000);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before printing; stderr:\n${err}`));
    });
  });
}

export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}
