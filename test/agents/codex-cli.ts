// The real Codex CLI (the registry's native binary) run headless against the fake Responses API, one CODEX_HOME each.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const TRIPLES: Record<string, string> = { 'linux-x64': 'x86_64-unknown-linux-musl', 'linux-arm64': 'aarch64-unknown-linux-musl', 'darwin-x64': 'x86_64-apple-darwin', 'darwin-arm64': 'aarch64-apple-darwin' };

/** The platform package's binary, or null (with the reason) when it is not installed or cannot run here. */
export async function findCodex(): Promise<{ bin: string } | { bin: null; why: string }> {
  const pkg = `@openai/codex-${process.platform}-${process.arch}`;
  const triple = TRIPLES[`${process.platform}-${process.arch}`];
  if (!triple) return { bin: null, why: `no Codex binary for ${process.platform}-${process.arch}` };
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

/** A CODEX_HOME whose config talks only to the fake Responses API at `api` (its base URL, ending in /v1). */
export function codexConfig(codexHome: string, api: string): void {
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
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

/** One headless `codex` run in `cwd`; stdin is closed so it never waits for more input. */
export async function codexRun(bin: string, o: { cwd: string; home: string; codexHome: string }, args: string[]): Promise<string> {
  const env = { PATH: process.env.PATH ?? '', HOME: o.home, LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', CODEX_HOME: o.codexHome, FAKE_KEY: 'dummy' };
  return new Promise((resolve, reject) => {
    const child = execFile(bin, args, { cwd: o.cwd, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`codex ${args.join(' ')} failed: ${err.message}\nstdout: ${stdout}\nstderr: ${stderr}`));
      else resolve(stdout);
    });
    child.stdin?.end();
  });
}

/** A new session: its id, from the `thread.started` event of `codex exec --json`. */
export async function codexNew(bin: string, o: { cwd: string; home: string; codexHome: string }, prompt: string): Promise<string> {
  const out = await codexRun(bin, o, ['exec', '--skip-git-repo-check', '--json', prompt]);
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { type?: string; thread_id?: string };
    if (e.type === 'thread.started' && e.thread_id) return e.thread_id;
  }
  throw new Error(`codex exec printed no thread.started event:\n${out}`);
}

export function codexResume(bin: string, o: { cwd: string; home: string; codexHome: string }, id: string, prompt: string): Promise<string> {
  return codexRun(bin, o, ['exec', '--skip-git-repo-check', 'resume', id, prompt]);
}
