// The real Codex CLI as the client: a session made on A is pulled on B at another path and resumed there; divergent
// resumes on both become the original and a fork on both machines, each resumable, nothing lost; a stale index row.
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyWal } from '../../cli/agents/codex-wal.js';
import { runCli } from '../helpers/cli.js';
import { codexConfig, codexNew, codexRun, findCodex } from './codex-cli.js';
import { useCodexCli } from './codex-cli-rig.js';
import { responsesConversation } from './fake-openai-responses.js';

const found = await findCodex();

/** Codex's index as SQLite reads it (its WAL applied): table names, and the threads' ids and rollout paths. */
async function readIndex(path: string): Promise<{ tables: string[]; threads: unknown[][] }> {
  const SQL = await (createRequire(import.meta.url)('sql.js') as () => Promise<{ Database: new (b: Uint8Array) => { exec(q: string): { values: unknown[][] }[]; close(): void } }>)();
  const wal = existsSync(`${path}-wal`) ? new Uint8Array(readFileSync(`${path}-wal`)) : new Uint8Array(0);
  const bytes = applyWal(new Uint8Array(readFileSync(path)), wal);
  bytes[18] = 1; // read in rollback mode: the in-memory copy has no WAL
  bytes[19] = 1;
  const d = new SQL.Database(bytes);
  try {
    const tables = (d.exec("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")[0]?.values ?? []).map((r) => String(r[0]));
    return { tables, threads: d.exec('SELECT id, rollout_path FROM threads')[0]?.values ?? [] };
  } finally {
    d.close();
  }
}
const OURS = /^(?:(?:first|second|third|fourth) prompt on [AB]|answer .+)$/;
if (found.bin === null) {
  console.error(`\n*** The real Codex CLI cannot run on this machine: ${found.why}. The Codex CLI tests are SKIPPED. ***\n`);
}

describe('the real Codex CLI syncing through sessync', () => {
  it('the codex binary runs here (required when CI=true)', () => {
    if (process.env.CI === 'true') expect(found.bin, found.bin === null ? found.why : '').not.toBeNull();
  });

  describe.skipIf(found.bin === null)('two machines, project at two paths', () => {
    const t = useCodexCli(() => found.bin!, 'sessync-codex-', OURS);
    const { machine, on, ask } = t;

    it('create on A, resume on B; divergent resumes become the original and a fork on both machines, both resumable', async () => {
      const a = machine('a');
      const b = machine('b', 'https://github.com/Acme/Codexy.git');
      await a.login(t.server);
      await b.login(t.server);
      t.api.replies.push('answer one from A');
      const id = await codexNew(found.bin!, on(a), 'first prompt on A');
      expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
      expect(b.text(id)).toBe(a.text(id));
      expect(b.rolloutOf(id).startsWith(b.sessionsDir)).toBe(true);

      expect(await ask(b, id, 'second prompt on B', 'answer two from B')).toEqual(['user: first prompt on A', 'assistant: answer one from A', 'user: second prompt on B']);
      await b.ok(['sync', '--json']);
      await a.ok(['sync', '--json']);
      expect(a.text(id)).toBe(b.text(id));

      // Both continue offline. A syncs first, so A's continuation keeps the session; B's becomes a fork everywhere.
      await ask(a, id, 'third prompt on A', 'answer three on A');
      await ask(b, id, 'third prompt on B', 'answer three on B');
      const aOwn = a.text(id);
      const bOwn = b.text(id);
      await a.ok(['sync', '--json']);
      const rb = await b.run(['sync']);
      expect(rb.code, rb.stderr).toBe(0);
      // B is told in words, and the summary says which fork and why.
      const told = new RegExp(`your work on this machine in session ${id} continues as session ([0-9a-f-]{36})`).exec(rb.stderr);
      expect(told, rb.stderr).not.toBeNull();
      const fork = told![1]!;
      expect(rb.stdout).toContain(`Codex session ${id} forked: this machine's continuation is now session ${fork}`);
      // A, on its next sync, makes the same fork (same id) of B's continuation, and its own rollout stays as it is.
      const ra = await a.run(['sync', '--json']);
      expect(ra.json()).toMatchObject({ failed: 0 });
      for (const m of [a, b, a, b]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      for (const m of [a, b]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });

      // Same rollouts, same bytes on both; the original is A's line of work, the fork B's; nothing of either is lost.
      expect(a.rollouts().map((r) => r.split('/').pop())).toEqual(b.rollouts().map((r) => r.split('/').pop()));
      expect(a.text(id)).toBe(b.text(id));
      expect(a.text(fork)).toBe(b.text(fork));
      expect(a.text(id)).toBe(aOwn);
      for (const l of bOwn.split('\n').slice(1)) expect(a.text(fork)).toContain(l);
      const forkMeta = JSON.parse(a.text(fork).split('\n')[0]!) as { type: string; payload: { id: string; forked_from_id: string } };
      expect(forkMeta).toMatchObject({ type: 'session_meta', payload: { id: fork, forked_from_id: id } });

      // A third machine that pulls later gets the same set, the same bytes.
      const c = machine('c', 'git@github.com:Acme/Codexy');
      await c.login(t.server);
      expect(await c.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      expect(c.rollouts().map((r) => r.split('/').pop())).toEqual(a.rollouts().map((r) => r.split('/').pop()));
      expect(c.text(id)).toBe(a.text(id));
      expect(c.text(fork)).toBe(a.text(fork));

      // Codex resumes each on either machine and sees that line of work.
      const mainLine = ['user: first prompt on A', 'assistant: answer one from A', 'user: second prompt on B', 'assistant: answer two from B'];
      expect(await ask(b, id, 'fourth prompt on B', 'answer four on B')).toEqual([...mainLine, 'user: third prompt on A', 'assistant: answer three on A', 'user: fourth prompt on B']);
      expect(await ask(a, fork, 'fourth prompt on A', 'answer four on A')).toEqual([...mainLine, 'user: third prompt on B', 'assistant: answer three on B', 'user: fourth prompt on A']);
    });

    it('a session started in a subfolder of the project: pulled and imported on B, it is a session of B\'s same subfolder', async () => {
      const remote = 'git@github.com:Acme/CodexSub.git';
      const a = machine('sub-a', remote);
      const b = machine('sub-b', remote);
      await a.login(t.server);
      await b.login(t.server);
      for (const m of [a, b]) mkdirSync(join(m.project, 'pkg', 'web'), { recursive: true });
      const inSub = (m: typeof a) => ({ ...on(m), cwd: join(m.project, 'pkg', 'web') });
      const bSub = realpathSync(join(b.project, 'pkg', 'web'));
      t.api.replies.push('answer from A in pkg/web');
      const id = await codexNew(found.bin!, inSub(a), 'first prompt on A');
      expect(await a.ok(['sync', '--all', '--json'])).toMatchObject({ failed: 0, pushedSessions: 1 });

      // B syncs from the project's top; the session is one of B's pkg/web (where `sessync list` there shows it).
      // Seen failing on old code: it was filed under B's top folder, and list in pkg/web showed nothing.
      expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
      const listed = await runCli(['list', '--json', '--cwd', bSub], { env: b.env });
      expect(listed.code, listed.stderr).toBe(0);
      expect((listed.json() as { id: string }[]).map((s) => s.id)).toEqual([id]);

      // A share of it, imported on B from the top, is a new rollout whose cwd is B's pkg/web: Codex run there resumes
      // it as the newest session of that folder (`resume --last` looks only at the sessions of the folder it runs in).
      // Seen failing on old code: its cwd was B's top, and `resume --last` in pkg/web found no session of its own.
      const url = ((await a.ok(['share', id, '--json'])) as { url: string }).url;
      const imported = (await b.ok(['import', url, '--json'])) as { id: string; path: string };
      const meta = JSON.parse(readFileSync(imported.path, 'utf8').split('\n')[0]!) as { payload: { cwd: string } };
      expect(meta.payload.cwd).toBe(bSub);
      t.api.replies.push('answer two on B');
      await codexRun(found.bin!, inSub(b), ['exec', '--skip-git-repo-check', 'resume', '--last', 'second prompt on B']);
      expect(responsesConversation(t.api.requests[t.api.requests.length - 1]!, OURS)).toEqual(['user: first prompt on A', 'assistant: answer from A in pkg/web', 'user: second prompt on B']);
      expect(readFileSync(imported.path, 'utf8')).toContain('second prompt on B');
    });

    it('a stale index row (a CODEX_HOME copied from another machine): after the pull, resume uses the pulled rollout', async () => {
      const a = machine('stale-a');
      const b = machine('stale-b');
      await a.login(t.server);
      await b.login(t.server);
      t.api.replies.push('answer one from A');
      const id = await codexNew(found.bin!, on(a), 'first prompt on A');
      await a.ok(['sync', '--json']);
      // B's CODEX_HOME is a copy of A's without its sessions: its index names A's rollout, at A's path.
      rmSync(b.codexHome, { recursive: true, force: true });
      cpSync(a.codexHome, b.codexHome, { recursive: true, filter: (src) => !src.startsWith(join(a.codexHome, 'sessions')) });
      codexConfig(b.codexHome, t.api.url);
      const aBefore = a.text(id);
      const indexBefore = await readIndex(join(b.codexHome, 'state_5.sqlite'));
      expect(indexBefore.threads).toEqual([[id, a.rolloutOf(id)]]);
      const r = await b.run(['sync']);
      expect(r.code, r.stderr).toBe(0);
      // That one row went, and nothing else of the index: every table is still there, and its WAL is folded in.
      const indexAfter = await readIndex(join(b.codexHome, 'state_5.sqlite'));
      expect(indexAfter.tables).toEqual(indexBefore.tables);
      expect(indexAfter.threads).toEqual([]);
      expect(existsSync(join(b.codexHome, 'state_5.sqlite-wal'))).toBe(false);
      expect(await ask(b, id, 'second prompt on B', 'answer two from B')).toEqual(['user: first prompt on A', 'assistant: answer one from A', 'user: second prompt on B']);
      expect(a.text(id)).toBe(aBefore); // A's file was not written through the stale row
      expect(b.text(id)).toContain('second prompt on B');
      expect(readFileSync(b.rolloutOf(id), 'utf8').startsWith(aBefore)).toBe(true);
      expect(r.stderr).toContain(`removed its row for session ${id}`);
    });
  });
});
