// The CLI entry itself: help lists every command with its summary, unknown commands and options exit 2, a closed pipe is not an error.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, runCli, tempDir } from '../helpers/cli.js';

describe('sessync entry', () => {
  it('--help lists every command with a summary', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const name of ['new', 'append', 'resume', 'fork', 'serve', 'sync', 'share', 'import']) {
      expect(r.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    }
  });

  it('--version and `version` print the package version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const args of [['--version'], ['version']]) {
      const r = await runCli(args);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(`sessync ${version}`);
    }
  });

  it('an unknown command or option exits 2 with a message on stderr and nothing on stdout', async () => {
    const a = await runCli(['frobnicate']);
    expect(a.code).toBe(2);
    expect(a.stdout).toBe('');
    expect(a.stderr).toMatch(/unknown command "frobnicate"/);
    const b = await runCli(['list', '--bogus', '--json']);
    expect(b.code).toBe(2);
    expect(JSON.parse(b.stderr).error.code).toBe('bad_input');
  });

  it('exits 0 quietly when the reader closes the pipe early (`sessync log | head`)', async () => {
    const t = tempDir();
    try {
      const env = { SESSYNC_HOME: t.dir };
      const created = (await runCli(['new', '--json', '--cwd', t.dir], { env })).json<{ id: string }>();
      const line = JSON.stringify({ type: 'message', message: { role: 'user', content: 'x'.repeat(2000) } });
      const appended = await runCli(['append', created.id, '--cwd', t.dir], { env, input: Array(300).fill(line).join('\n') + '\n' });
      expect(appended.code).toBe(0);
      const child = spawn(process.execPath, [CLI_BIN, 'log', created.id, '--json', '--cwd', t.dir], { env: { ...process.env, ...env } });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
      child.stdout.once('data', () => child.stdout.destroy()); // read one chunk, then hang up like `head`
      const code = await new Promise<number | null>((r) => child.on('close', r));
      expect(stderr).not.toMatch(/EPIPE|Error/);
      expect(code).toBe(0);
    } finally {
      t.cleanup();
    }
  });
});
