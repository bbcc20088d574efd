// Global flags (--json, --cwd, --sessions-dir, --help) go before or after the command, as in git and gh; option errors read cleanly.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { cliEnv, type CliEnv } from './cli-env.js';

describe('global flags anywhere', () => {
  let t: CliEnv;
  let id: string;
  beforeEach(async () => {
    t = cliEnv();
    id = (await t.json<{ id: string }>(['new'])).id;
  });
  afterEach(() => t.cleanup());
  const env = () => ({ SESSYNC_HOME: t.home });
  const run = (args: string[]) => runCli(args, { env: env() });

  it('--json before and after the command answers JSON', async () => {
    for (const args of [['--json', 'list', '--cwd', t.project], ['list', '--json', '--cwd', t.project], ['--json', '--cwd', t.project, 'list']]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
      expect(r.json().map((s: { id: string }) => s.id), args.join(' ')).toEqual([id]);
    }
  });

  it('--cwd DIR and --cwd=DIR before and after the command pick the project', async () => {
    for (const args of [['--cwd', t.project, 'list', '--json'], ['list', '--json', '--cwd', t.project], [`--cwd=${t.project}`, 'list', '--json'], ['list', `--cwd=${t.project}`, '--json']]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
      expect(r.json().map((s: { id: string }) => s.id), args.join(' ')).toEqual([id]);
    }
  });

  it('--sessions-dir before and after the command (the README\'s `sessync --sessions-dir D list --all`)', async () => {
    const other = join(t.dir, 'pi-sessions');
    mkdirSync(other);
    const made = await runCli(['--sessions-dir', other, 'new', '--json', '--cwd', t.project], { env: env() });
    expect(made.code, made.stderr).toBe(0);
    const otherId = made.json().id;
    for (const args of [['--sessions-dir', other, 'list', '--all', '--json'], ['list', '--all', '--sessions-dir', other, '--json'], [`--sessions-dir=${other}`, '--json', 'list', '--all']]) {
      const r = await run(args);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
      expect(r.json().map((s: { id: string }) => s.id), args.join(' ')).toEqual([otherId]);
    }
    // Without the flag, the default root: only the first session.
    expect((await t.json<{ id: string }[]>(['list', '--all'])).map((s) => s.id)).toEqual([id]);
  });

  it('--help before and after the command shows that command\'s usage', async () => {
    for (const args of [['--help', 'list'], ['list', '--help'], ['-h', 'list'], ['help', 'list']]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(/^Usage: sessync list/);
    }
    const top = await run(['--help']);
    expect(top.stdout).toMatch(/before or after the command/);
  });

  it('an unknown option is a clean usage error, not node\'s parser text', async () => {
    const r = await t.run(['list', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('sessync: unknown option --bogus for sessync list. Usage: sessync list [--all] [--agent pi|claude-code|codex|all] (`sessync list --help` for more)\n');
    // Balanced quotes, no advice about `--`.
    expect(r.stderr.split("'").length % 2).toBe(1);
    expect(r.stderr).not.toMatch(/positional argument/);
    const before = await run(['--bogus', 'list', '--cwd', t.project]);
    expect(before.code).toBe(2);
    expect(before.stderr).toMatch(/^sessync: unknown option --bogus for sessync list\./);
    const missing = await run(['list', '--cwd']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^sessync: option --cwd needs a value\. Usage: sessync list/);
    const json = await t.run(['list', '--bogus', '--json']);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'bad_input', message: expect.stringMatching(/^unknown option --bogus for sessync list/) });
  });
});

describe('global flags without a command', () => {
  it('--json without a command, or with a global flag missing its value, is a JSON bad_input error on stderr', async () => {
    for (const args of [['--json'], ['--json', '--cwd'], ['--json', '--sessions-dir']]) {
      const r = await runCli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(JSON.parse(lines[0]!).error, args.join(' ')).toMatchObject({ code: 'bad_input', retryable: false });
    }
    expect(JSON.parse((await runCli(['--json'])).stderr).error.message).toMatch(/^no command given\. Usage: sessync /);
    expect(JSON.parse((await runCli(['--json', '--cwd'])).stderr).error.message).toMatch(/^option --cwd needs a value\. Usage: sessync /);
  });

  it('`sessync --cwd` names the missing value, as `sessync list --cwd` does, instead of printing the help', async () => {
    const r = await runCli(['--cwd']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('sessync: option --cwd needs a value. Usage: sessync [--json] [--cwd DIR] [--sessions-dir DIR] <command> [args] (`sessync --help` for more)\n');
    const dir = await runCli(['--sessions-dir']);
    expect(dir.code).toBe(2);
    expect(dir.stderr).toMatch(/^sessync: option --sessions-dir needs a value\./);
  });

  it('without --json and without a command the help still goes to stdout with exit 2; --help still exits 0', async () => {
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toMatch(/^sessync: keeps/);
    const help = await runCli(['--json', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^sessync: keeps/);
  });
});
