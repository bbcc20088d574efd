// A sandbox for CLI tests: its own SESSYNC_HOME and project folder, a runner bound to them, and file snapshots.
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/cli.js';
import type { CliResult } from '../helpers/cli.js';

export interface CliEnv {
  dir: string;
  home: string;
  project: string;
  root: string;
  /** Runs `sessync args... --cwd project` with this home; `input` goes to stdin. */
  run(args: string[], input?: string, extraEnv?: Record<string, string>): Promise<CliResult>;
  /** Like run with --json, failing the test with stderr when the exit code is not 0. */
  json<T = any>(args: string[], input?: string): Promise<T>;
  cleanup(): void;
}

export function cliEnv(): CliEnv {
  const t = tempDir('sessync-cli-');
  const dir = realpathSync(t.dir);
  const home = join(dir, 'home');
  const project = join(dir, 'project');
  mkdirSync(project, { recursive: true });
  const env = { SESSYNC_HOME: home, SESSYNC_SESSIONS_DIR: undefined, SESSYNC_LOCK_TIMEOUT_MS: undefined };
  const run = (args: string[], input?: string, extraEnv: Record<string, string> = {}) =>
    runCli(args.includes('--cwd') ? args : [...args, '--cwd', project], { env: { ...env, ...extraEnv }, input: input ?? '' });
  return {
    dir,
    home,
    project,
    root: join(home, 'sessions'),
    run,
    async json(args, input) {
      const r = await run([...args, '--json'], input);
      if (r.code !== 0) throw new Error(`sessync ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
      return r.json();
    },
    cleanup: t.cleanup,
  };
}

/** Every file under dir (relative path -> bytes as latin1 text), for before/after comparisons. */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      const r = rel ? `${rel}/${n}` : n;
      if (statSync(p).isDirectory()) walk(p, r);
      else out.set(r, readFileSync(p, 'latin1'));
    }
  };
  walk(dir, '');
  return out;
}

export function lines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
}

export function entriesOf(path: string): any[] {
  return lines(path)
    .slice(1)
    .map((l) => JSON.parse(l));
}

export function writeLines(path: string, values: object[]): void {
  writeFileSync(path, values.map((v) => JSON.stringify(v) + '\n').join(''));
}

export function msg(role: string, text: string, extra: object = {}): object {
  // append refuses an assistant message without the provider and model pi needs.
  const model = role === 'assistant' ? { provider: 'anthropic', model: 'claude-sonnet-4-5' } : {};
  return { type: 'message', message: { role, content: [{ type: 'text', text }], ...model, ...extra } };
}

export const jsonl = (values: object[]) => values.map((v) => JSON.stringify(v)).join('\n') + '\n';
