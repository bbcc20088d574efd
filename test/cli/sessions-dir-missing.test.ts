// A named sessions folder (--sessions-dir, SESSYNC_SESSIONS_DIR) that does not exist is refused by every command that uses it, never created; others ignore it.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { cliEnv, type CliEnv } from './cli-env.js';

// Commands that read or write pi's/sessync's session files: the named folder is checked before they run.
const COMMANDS: string[][] = [['new'], ['append', 'x'], ['context', 'x'], ['status', '--all'], ['sync', '--all'], ['sync', '--agent', 'all'], ['pull', '--all'], ['push', '--all'], ['rm', 'x'], ['import', 'x'], ['doctor', 'x']];
// Commands that never use that folder: a named folder not made yet (a new machine's shell profile) must not stop them.
const UNUSED: string[][] = [['version'], ['logout'], ['key', 'status'], ['tokens'], ['shares'], ['project'], ['sync', '--agent', 'claude-code'], ['status', '--agent', 'claude-code'], ['list', '--agent', 'codex']];

describe('a named sessions folder that does not exist', () => {
  let t: CliEnv;
  beforeEach(() => {
    t = cliEnv();
  });
  afterEach(() => t.cleanup());

  it('--sessions-dir DIR is refused with a bad_input error naming DIR and saying to create it; nothing is made', async () => {
    const typo = join(t.dir, 'sesions', 'deep');
    for (const args of COMMANDS) {
      for (const flag of [['--sessions-dir', typo], [`--sessions-dir=${typo}`]]) {
        const r = await t.run(['--json', ...flag, ...args], '');
        const what = `${flag.join(' ')} ${args.join(' ')}`;
        expect(r.code, `${what}\n${r.stderr}`).toBe(2);
        expect(r.stdout, what).toBe('');
        const err = JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).error;
        expect(err, what).toMatchObject({ code: 'bad_input', retryable: false });
        expect(err.message, what).toBe(`--sessions-dir ${typo} does not exist: create it first (mkdir -p ${typo}) if that is the folder you meant, or fix the path. Nothing was written.`);
      }
    }
    expect(existsSync(join(t.dir, 'sesions'))).toBe(false);
    expect(existsSync(t.home)).toBe(false); // not even sessync's home: the command never ran
    const human = await t.run(['new', '--sessions-dir', typo]);
    expect(human.code).toBe(2);
    expect(human.stderr).toBe(`sessync: --sessions-dir ${typo} does not exist: create it first (mkdir -p ${typo}) if that is the folder you meant, or fix the path. Nothing was written.\n`);
    expect(existsSync(join(t.dir, 'sesions'))).toBe(false);
  });

  it('commands that do not use the sessions folder run with a missing one named, and create nothing there', async () => {
    const typo = join(t.dir, 'not-yet');
    const isolated = { HOME: join(t.dir, 'user-home') }; // no ~/.claude or ~/.codex of the machine running the test
    for (const args of UNUSED) {
      for (const how of [{ argv: ['--sessions-dir', typo], env: isolated }, { argv: [], env: { ...isolated, SESSYNC_SESSIONS_DIR: typo } }]) {
        const r = await t.run(['--json', ...how.argv, ...args], '', how.env);
        expect(r.stderr, `${how.argv.join(' ')} ${args.join(' ')}`).not.toMatch(/does not exist/);
        expect(r.code, `${args.join(' ')}\n${r.stderr}`).not.toBe(2);
      }
    }
    expect(existsSync(typo)).toBe(false);
  });

  it('a <ref> that is a path reads that file only: doctor, log, tree, context and migrate of a copy run with a missing folder named', async () => {
    const typo = join(t.dir, 'not-yet');
    const made = await t.run(['new', '--json'], '');
    expect(made.code, made.stderr).toBe(0);
    const copy = join(t.dir, 'copy.jsonl');
    writeFileSync(copy, readFileSync(made.json().path));
    for (const args of [['doctor', copy], ['log', copy], ['tree', copy], ['context', copy], ['migrate', copy]]) {
      const r = await t.run(['--json', '--sessions-dir', typo, ...args], '');
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
    }
    const byId = await t.run(['--json', '--sessions-dir', typo, 'log', made.json().id], '');
    expect(byId.code).toBe(2); // an id is looked up in the folder: still refused
    expect(existsSync(typo)).toBe(false);
  });

  it('list --all of a missing named folder is an empty list with a note (the README example before pi\'s first session)', async () => {
    const piFolder = join(t.dir, 'user-home', '.pi', 'agent', 'sessions');
    const r = await t.run(['--sessions-dir', piFolder, 'list', '--all', '--json'], '', { HOME: join(t.dir, 'user-home') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual([]);
    expect(JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).note.message).toMatch(new RegExp(`^--sessions-dir ${piFolder} does not exist, so it holds no sessions yet`));
    const human = await t.run(['--sessions-dir', piFolder, 'list', '--all'], '', { HOME: join(t.dir, 'user-home') });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^no sessions in /);
    expect(human.stderr).toMatch(/^sessync: note: --sessions-dir .* does not exist, so it holds no sessions yet/);
    expect(existsSync(piFolder)).toBe(false);
  });

  it('SESSYNC_SESSIONS_DIR naming a missing folder is refused the same way, naming the variable', async () => {
    const typo = join(t.dir, 'no-such-sessions');
    for (const args of [['new'], ['pull', '--all'], ['sync', '--all']]) {
      const r = await t.run(['--json', ...args], '', { SESSYNC_SESSIONS_DIR: typo });
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(2);
      expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'bad_input', message: expect.stringMatching(new RegExp(`^SESSYNC_SESSIONS_DIR ${typo} does not exist: create it first`)) });
    }
    expect(existsSync(typo)).toBe(false);
    // The flag names the folder for this run: a good one wins over a bad variable.
    const good = join(t.dir, 'good');
    mkdirSync(good);
    const made = await t.run(['new', '--json', '--sessions-dir', good], '', { SESSYNC_SESSIONS_DIR: typo });
    expect(made.code, made.stderr).toBe(0);
    expect(readdirSync(good)).toHaveLength(1);
  });

  it('a file, or a path through a file, is refused; an empty --sessions-dir= is a missing value, not the default folder', async () => {
    const file = join(t.dir, 'a-file');
    writeFileSync(file, 'x');
    const asFile = await t.run(['--json', 'new', '--sessions-dir', file]);
    expect(asFile.code).toBe(2);
    expect(JSON.parse(asFile.stderr).error).toMatchObject({ code: 'bad_input', message: `--sessions-dir ${file} is not a folder: name the folder that holds the session files` });
    const through = await t.run(['--json', 'new', '--sessions-dir', join(file, 'sub')]);
    expect(through.code).toBe(2);
    expect(JSON.parse(through.stderr).error.message).toMatch(/cannot be a folder: a part of its path is a file/);
    const empty = await t.run(['--json', 'new', '--sessions-dir=']);
    expect(empty.code).toBe(2);
    expect(JSON.parse(empty.stderr).error).toMatchObject({ code: 'bad_input', message: expect.stringMatching(/^option --sessions-dir needs a value/) });
    expect(existsSync(t.root)).toBe(false); // the default folder was not used instead
  });

  it('an existing --sessions-dir works, and without one the default sessions folder is still created', async () => {
    const mine = join(t.dir, 'mine');
    mkdirSync(mine);
    const r = await t.run(['new', '--json', '--sessions-dir', mine]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().path.startsWith(mine + '/')).toBe(true);
    expect(existsSync(t.root)).toBe(false);
    const dflt = await runCli(['new', '--json', '--cwd', t.project], { env: { SESSYNC_HOME: t.home, SESSYNC_SESSIONS_DIR: undefined } });
    expect(dflt.code, dflt.stderr).toBe(0);
    expect(dflt.json().path.startsWith(t.root + '/')).toBe(true);
  });
});
