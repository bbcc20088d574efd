// Machines for Codex share tests (a sessync home, a CODEX_HOME and a project) and the real Codex CLI run headless.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Machine } from '../sync/helpers.js';

const run = promisify(execFile);

export class CodexMachine extends Machine {
  readonly codexHome: string;

  constructor(root: string, name: string, opts: { remote?: string } = {}) {
    const codexHome = join(root, name, 'codex');
    // A HOME of its own and no Claude Code folder: the test's machines never read the real ones.
    super(root, name, { ...opts, env: { CODEX_HOME: codexHome, HOME: join(root, name, 'user-home'), CLAUDE_CONFIG_DIR: join(root, name, 'no-claude') } });
    this.codexHome = codexHome;
    mkdirSync(join(codexHome, 'sessions'), { recursive: true });
  }

  /** Writes a rollout at `rel` under the sessions folder (e.g. 2025/12/09/rollout-...-<uuid>.jsonl). */
  writeRollout(rel: string, text: string): string {
    const path = join(this.codexHome, 'sessions', rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  /** Every rollout under the sessions folder, relative to it. */
  rollouts(): string[] {
    const root = join(this.codexHome, 'sessions');
    return (readdirSync(root, { recursive: true }) as string[]).filter((n) => n.endsWith('.jsonl')).sort();
  }

  /** The config that points Codex at the fake Responses API at `api` (its base URL, ending in /v1). */
  configure(api: string): void {
    writeFileSync(
      join(this.codexHome, 'config.toml'),
      [
        'model = "fake-model"',
        'model_provider = "fake"',
        'check_for_update_on_startup = false',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = "${api}"`,
        'env_key = "FAKE_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
  }

  /** One headless `codex exec` in this machine's project, with its own HOME and CODEX_HOME. */
  async codex(bin: string, args: string[]): Promise<string> {
    const env = { PATH: process.env.PATH ?? '', HOME: join(this.home, '..', 'user-home'), CODEX_HOME: this.codexHome, FAKE_KEY: 'dummy', LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1' };
    mkdirSync(env.HOME, { recursive: true });
    // stdin closed: `codex exec` reads a piped stdin as more prompt and would wait for it forever.
    const child = spawn(bin, ['exec', '--skip-git-repo-check', ...args], { cwd: this.project, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(timer);
    if (code !== 0) throw new Error(`codex exec ${args.join(' ')} exited ${code}\nstdout: ${stdout}\nstderr: ${stderr}`);
    return stdout;
  }
}

/** The platform package's binary, or null (with the reason) when it is not installed or cannot run here. */
export async function findCodex(): Promise<{ bin: string } | { bin: null; why: string }> {
  const triple = process.arch === 'arm64' ? 'aarch64-unknown-linux-musl' : 'x86_64-unknown-linux-musl';
  const pkg = `@openai/codex-${process.platform}-${process.arch}`;
  let bin: string;
  try {
    bin = join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), 'vendor', triple, 'bin', 'codex');
  } catch {
    return { bin: null, why: `${pkg} is not installed (npm ci installs it with @openai/codex)` };
  }
  if (!existsSync(bin)) return { bin: null, why: `${bin} is missing` };
  try {
    await run(bin, ['--version'], { timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' } });
  } catch (e) {
    return { bin: null, why: `${bin} --version failed: ${(e as Error).message}` };
  }
  return { bin };
}

/** The thread id `codex exec --json` reports (its thread.started event). */
export function threadId(jsonl: string): string {
  for (const l of jsonl.split('\n')) {
    if (!l.startsWith('{')) continue;
    const v = JSON.parse(l) as { type?: string; thread_id?: string };
    if (v.type === 'thread.started' && typeof v.thread_id === 'string') return v.thread_id;
  }
  throw new Error(`no thread.started event in codex output:\n${jsonl}`);
}
