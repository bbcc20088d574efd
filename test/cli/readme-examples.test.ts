// Every command in the README's "Local sessions" and "Sync between machines" walkthroughs runs as written (ids mapped to real ones).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { startNodeServer, type TestServer } from '../sync/helpers.js';

/** The first ```sh block after a heading, as shell commands: continuation lines joined, comments kept apart. */
function shBlock(heading: string): { command: string; comment: string }[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`\n## ${heading}`);
  if (at < 0) throw new Error(`README has no section "${heading}"`);
  const start = readme.indexOf('```sh\n', at) + 6;
  const body = readme.slice(start, readme.indexOf('\n```', start)).replace(/\\\n\s*/g, '');
  return body.split('\n').map((line) => {
    // A comment starts at " #" outside quotes.
    let quote = '';
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quote) {
        if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '#' && (i === 0 || line[i - 1] === ' ')) return { command: line.slice(0, i).trim(), comment: line.slice(i + 1).trim() };
    }
    return { command: line.trim(), comment: '' };
  });
}

/** A machine for the walkthrough: its own HOME (so ~/... stays inside the test), project folder and `sessync` on PATH. */
function machine(dir: string, name: string, remote?: string) {
  const home = join(dir, name, 'home');
  const project = join(dir, name, 'project');
  const bin = join(dir, name, 'bin');
  mkdirSync(join(home, '.pi', 'agent', 'sessions'), { recursive: true });
  mkdirSync(project, { recursive: true });
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'sessync'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_BIN}" "$@"\n`);
  chmodSync(join(bin, 'sessync'), 0o755);
  if (remote) {
    execFileSync('git', ['init', '-q', project]);
    execFileSync('git', ['-C', project, 'remote', 'add', 'origin', remote]);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, SESSYNC_HOME: join(home, '.sessync'), PATH: `${bin}:${process.env.PATH}` };
  delete env.SESSYNC_SESSIONS_DIR;
  return {
    home,
    project,
    /** Runs one README line in bash, in the project folder; returns exit code and output. */
    sh(command: string, input?: string): { code: number; stdout: string; stderr: string } {
      try {
        const stdout = execFileSync('bash', ['-c', command], { cwd: project, env, encoding: 'utf8', input: input ?? '', stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 });
        return { code: 0, stdout, stderr: '' };
      } catch (e) {
        const x = e as { status: number; stdout: string; stderr: string };
        return { code: x.status ?? -1, stdout: x.stdout, stderr: x.stderr };
      }
    },
  };
}

/** The ids a README line names, replaced by the real ones known so far. */
function mapIds(command: string, ids: Map<string, string>): string {
  let out = command;
  for (const [shown, real] of ids) out = out.split(shown).join(real);
  return out;
}

describe('README examples', () => {
  let dir: { dir: string; cleanup(): void };
  beforeAll(() => {
    dir = tempDir('sessync-readme-');
  });
  afterAll(() => dir.cleanup());

  it('"Local sessions": every command exits 0, with the ids as the README shows them (short forms)', () => {
    const m = machine(dir.dir, 'local');
    const lines = shBlock('Local sessions');
    const ids = new Map<string, string>();
    const shortOf = (id: string) => id.slice(-8);
    const entryIds = (): string[] => {
      const r = m.sh(`sessync resume ${ids.get('5f0b6179')} --json`);
      const path = (JSON.parse(r.stdout) as { path: string }).path;
      return readFileSync(path, 'utf8').split('\n').filter(Boolean).slice(1).map((l) => (JSON.parse(l) as { id: string }).id);
    };
    const ran: string[] = [];
    for (const { command, comment } of lines) {
      if (command.startsWith('#') || (!command && comment.startsWith('...the agent answers'))) {
        // The agent's answer the README's comment speaks of (an entry the walkthrough then names as a836d89e).
        const answer = JSON.stringify({ type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'Plan A: patch the parser' }], provider: 'anthropic', model: 'claude-sonnet-4-5', api: 'anthropic-messages', usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: 'stop', timestamp: Date.now() } });
        const r = m.sh(`sessync append ${ids.get('5f0b6179')}`, answer + '\n');
        expect(r.code, r.stderr).toBe(0);
        ids.set('a836d89e', shortOf(entryIds()[2]!));
        continue;
      }
      if (!command || command.startsWith('cd ')) continue;
      const r = m.sh(mapIds(command, ids));
      expect(r.code, `README line: ${command}\n${r.stderr}`).toBe(0);
      ran.push(command);
      if (command.startsWith('sessync new')) {
        // The README shows what `new` prints: the short form first.
        const printed = /^created session ([0-9a-f]{8}) \(([0-9a-f-]{36})\)$/m.exec(r.stdout);
        expect(printed, r.stdout).not.toBeNull();
        expect(comment).toMatch(/-> created session 5f0b6179 \(01a22ceb-6179-[0-9a-f-]+5f0b6179\)/);
        expect(printed![1]).toBe(shortOf(printed![2]!));
        ids.set('5f0b6179', printed![1]!);
      }
      if (command.includes('sessync append')) {
        const [model, user] = entryIds();
        ids.set('37830c2a', shortOf(model!));
        ids.set('967c062c', shortOf(user!));
      }
    }
    expect(ran.length).toBeGreaterThanOrEqual(14);
    expect(ran.some((c) => c.startsWith('sessync --sessions-dir ~/.pi/agent/sessions list --all'))).toBe(true);
  });

  describe('"Sync between machines"', () => {
    let server: TestServer & { cleanup(): void };
    beforeAll(async () => {
      server = await startNodeServer();
    }, 60_000);
    afterAll(async () => {
      await server?.stop();
      server?.cleanup();
    });

    it('the walkthrough runs on a laptop and a desktop with different remotes and paths', () => {
      const laptop = machine(dir.dir, 'laptop', 'git@github.com:acme/app.git');
      const desktop = machine(dir.dir, 'desktop', 'https://github.com/acme/app.git');
      const made = laptop.sh('sessync new --json');
      expect(made.code, made.stderr).toBe(0);
      const id = (JSON.parse(made.stdout) as { id: string }).id;
      expect(laptop.sh(`echo '{"type":"message","message":{"role":"user","content":"hello"}}' | sessync append ${id}`).code).toBe(0);
      const ids = new Map([['5f0b6179', id.slice(-8)], ['http://127.0.0.1:8787', server.url], ['http://laptop:8787', server.url], ['sst_...', server.token]]);
      let who: (typeof laptop)[] = [];
      let ran = 0;
      for (const { command, comment } of shBlock('Sync between machines')) {
        if (!command) {
          if (/^laptop/.test(comment)) who = [laptop];
          else if (/^desktop/.test(comment)) who = [desktop];
          else if (/then on each/.test(comment)) who = [laptop, desktop];
          else if (/on the laptop: run a server/.test(comment)) who = [];
          continue;
        }
        if (command.startsWith('npm start')) continue; // the server: started above on a free port
        // "copy it to the desktop safely": the key file the laptop exported goes over.
        if (command.includes('key import --file ~/')) copyFileSync(join(laptop.home, 'sessync-key.txt'), join(desktop.home, 'sessync-key.txt'));
        for (const m of who) {
          // A watcher runs until stopped: `timeout` stands in for Ctrl-C (exit 124 is the timeout's).
          const line = command.includes('--watch') ? `timeout -s INT 3 ${mapIds(command, ids)}; test $? -eq 0 -o $? -eq 124` : mapIds(command, ids);
          const r = m.sh(line);
          expect(r.code, `README line: ${command}\n${r.stderr}`).toBe(0);
          ran++;
        }
      }
      expect(ran).toBeGreaterThanOrEqual(10);
      // The desktop has the laptop's session, at its own path.
      const listed = JSON.parse(desktop.sh('sessync list --json').stdout) as { id: string; cwd: string }[];
      expect(listed.map((s) => s.id)).toEqual([id]);
      expect(listed[0]!.cwd).toBe(desktop.project);
    }, 120_000);
  });
});
