// A string option followed by another option (`--cwd --json`) is missing its value, not given one it cannot take.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('a string option followed by another option', () => {
  const cases: string[][] = [['--cwd', '--json'], ['list', '--cwd', '--json'], ['--cwd', '--json', 'list'], ['list', '--sessions-dir', '--json'], ['--sessions-dir', '--json']];
  for (const argv of cases) {
    it(`sessync ${argv.join(' ')}: "option needs a value", exit 2`, async () => {
      const r = await runCli(argv, { env: { SESSYNC_SESSIONS_DIR: undefined } });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      const opt = argv.find((a) => a === '--cwd' || a === '--sessions-dir')!;
      const err = JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).error;
      expect(err).toMatchObject({ code: 'bad_input', retryable: false });
      expect(err.message).toMatch(new RegExp(`^option ${opt} needs a value\\. Usage: sessync `));
    });
  }
});

describe('a string option whose value starts with a dash', () => {
  it('sessync compact X --summary "- bullet" --json: says to give it with =, exit 2', async () => {
    const r = await runCli(['compact', 'abcd1234', '--summary', '- bullet summary', '--json'], { env: { SESSYNC_SESSIONS_DIR: undefined } });
    expect(r.code, r.stderr).toBe(2);
    const err = JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).error;
    expect(err).toMatchObject({ code: 'bad_input', retryable: false });
    expect(err.message).toContain('the value of --summary starts with a dash ("- bullet summary")');
    expect(err.message).toContain('--summary=VALUE');
  });

  it('sessync compact X --summary --json: still "needs a value" (the word after it is an option)', async () => {
    const r = await runCli(['compact', 'abcd1234', '--summary', '--json'], { env: { SESSYNC_SESSIONS_DIR: undefined } });
    expect(r.code, r.stderr).toBe(2);
    expect(JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).error.message).toMatch(/^option --summary needs a value\./);
  });
});

describe('the word an option hint quotes', () => {
  const errorOf = async (argv: string[]) => {
    const r = await runCli(argv, { env: { SESSYNC_SESSIONS_DIR: undefined } });
    expect(r.code, r.stderr).toBe(2);
    return JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!).error as { code: string; message: string };
  };

  it('a one-letter dash value that is no option of the command (--summary -x): the hint to use =, not "needs a value"', async () => {
    const err = await errorOf(['compact', 'abcd1234', '--summary', '-x', '--json']);
    expect(err.message).toContain('the value of --summary starts with a dash ("-x")');
    expect(err.message).toContain('--summary=VALUE');
  });

  it('a one-letter word that is an option (-h) is still a missing value', async () => {
    expect((await errorOf(['compact', 'abcd1234', '--summary', '-h', '--json'])).message).toMatch(/^option --summary needs a value\./);
  });

  it('a repeated option: the hint quotes the word after the occurrence refused, not after the first', async () => {
    const dash = await errorOf(['pull', '--map', 'k=/a', '--map', '-x=/b', '--json']);
    expect(dash.message).toContain('the value of --map starts with a dash ("-x=/b")');
    const missing = await errorOf(['compact', 'abcd1234', '--summary', 'fine', '--summary', '--json']);
    expect(missing.message).toMatch(/^option --summary needs a value\./);
  });
});
