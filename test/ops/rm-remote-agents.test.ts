// `sessync rm --remote` of a Claude Code or Codex session: one rule whether this machine has the session or only the
// server does. It is deleted on the server; the agent's own files are never touched (sessync only reads and appends
// them), and a copy here is not pushed again.
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, useServer } from '../sync/helpers.js';
import { ClaudeMachine, turn } from '../agents/claude-rig.js';
import { CodexMachine } from '../agents/codex-rig.js';

interface Made {
  m: Machine;
  id: string;
  /** The agent's own main file of the session. */
  file: string;
  /** Appends a line as the agent would. */
  more(): void;
  /** The agent's own main file of the session on another machine of the same agent (after it pulled it). */
  fileOn(other: Machine): string;
  /** Appends a line there as the agent would (a new one on each call). */
  moreOn(other: Machine): void;
}

const agents: [string, (root: string, name: string, remote: string, n: number) => Made][] = [
  [
    'claude-code',
    (root, name, remote, n) => {
      const m = new ClaudeMachine(root, name, { remote });
      const id = `5e5e5e5${n}-1111-4222-8333-444444444444`;
      const cwd = realpathSync(m.project);
      const file = m.write(`${id}.jsonl`, turn(id, cwd, null, 'the key is sk-not-really', [`5f5f5f5${n}-0000-4000-8000-000000000001`, `5f5f5f5${n}-0000-4000-8000-000000000002`], '2026-01-02T00:00:00.000Z'));
      let k = 2;
      const later = (at: string) => {
        const ids = [k + 1, k + 2].map((i) => `5f5f5f5${n}-0000-4000-8000-${String(i).padStart(12, '0')}`) as [string, string];
        writeFileSync(at, readFileSync(at, 'utf8') + turn(id, cwd, `5f5f5f5${n}-0000-4000-8000-${String(k).padStart(12, '0')}`, `later ${k}`, ids, '2026-01-02T00:01:00.000Z'));
        k += 2;
      };
      const fileOn = (other: Machine) => join((other as ClaudeMachine).folder, `${id}.jsonl`);
      return { m, id, file, more: () => later(file), fileOn, moreOn: (other) => later(fileOn(other)) };
    },
  ],
  [
    'codex',
    (root, name, remote, n) => {
      const m = new CodexMachine(root, name, { remote });
      const id = `019b04ae-b1c6-7c72-a134-a4c2de6605${n}d`;
      const file = join(m.sessionsDir, '2025', '12', '09', `rollout-2025-12-09T19-55-16-${id}.jsonl`);
      mkdirSync(join(file, '..'), { recursive: true });
      const line = (o: unknown) => JSON.stringify(o) + '\n';
      writeFileSync(file, line({ timestamp: '2025-12-09T19:55:16.336Z', type: 'session_meta', payload: { id, timestamp: '2025-12-09T19:55:16.295Z', cwd: realpathSync(m.project), originator: 'codex_cli_rs', cli_version: '0.66.0', source: 'cli', model_provider: 'openai' } }) + line({ timestamp: '2025-12-09T19:55:18.144Z', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'the key is sk-not-really' }] } }));
      let k = 0;
      const later = (at: string) => writeFileSync(at, readFileSync(at, 'utf8') + line({ timestamp: '2025-12-09T19:56:00.000Z', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `later ${k++}` }] } }));
      const fileOn = (other: Machine) => (other as CodexMachine).rolloutOf(id);
      return { m, id, file, more: () => later(file), fileOn, moreOn: (other) => later(fileOn(other)) };
    },
  ],
];

describe('rm --remote of another agent\'s session', () => {
  const rig = useServer(undefined, 'sessync-rmagents-');

  describe.each(agents)('%s', (agent, make) => {
    it('seen here or only on the server: deleted on the server, the agent\'s files untouched, not pushed again', async () => {
      const remote = `git@github.com:acme/rm-${agent}.git`;
      // Two sessions: one removed from the machine that has it, one from a machine that never saw it.
      const seen = make(rig.root, `${agent}-has`, remote, 1);
      await seen.m.login(rig.server);
      expect(await seen.m.ok(['sync', '--json'])).toMatchObject({ failed: 0, pushedSessions: 1 });
      const other = make(rig.root, `${agent}-other`, remote, 2);
      await other.m.login(rig.server);
      expect(await other.m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      const stranger = new Machine(rig.root, `${agent}-stranger`, { remote });
      await stranger.login(rig.server);

      const before = readFileSync(seen.file, 'utf8');
      // Seen failing on old code: exit 2, "sessync rm removes pi sessions only", and nothing deleted on the server.
      const here = await seen.m.run(['rm', seen.id, '--remote', '--json']);
      expect(here.code, here.stderr).toBe(0);
      expect(here.json()).toMatchObject({ session: seen.id, remote: true, agent, path: seen.file, localRemoved: false });
      const away = await stranger.run(['rm', other.id, '--remote', '--json']);
      expect(away.code, away.stderr).toBe(0);
      expect(away.json()).toMatchObject({ session: other.id, remote: true });
      expect(away.json().localRemoved).toBeUndefined();

      // Both gone from the server: a machine new to the project pulls neither.
      const fresh = make(rig.root, `${agent}-fresh`, remote, 3);
      await fresh.m.login(rig.server);
      expect(await fresh.m.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 0 });
      // The agent's own file is as it was; what the agent writes after is not pushed.
      expect(readFileSync(seen.file, 'utf8')).toBe(before);
      seen.more();
      const later = await seen.m.ok(['sync', '--json']);
      expect(later).toMatchObject({ failed: 0, pushedEntries: 0 });
      // Each later sync names the session kept here by the agent's own file, not sessync's mirror of it.
      // Seen failing on old code: the path was the mirror's, under SESSYNC_HOME.
      expect(later.deleted).toEqual([expect.objectContaining({ session: seen.id, action: 'kept', path: seen.file })]);
      // So do the syncs of a machine that has both (it pulled the first): each is named by its agent's file.
      for (let i = 0; i < 2; i++) {
        const kept = (await other.m.ok(['sync', '--json'])).deleted as { session: string; action: string; path: string }[];
        expect(kept.map((d) => d.session).sort()).toEqual([seen.id, other.id].sort());
        expect(kept.find((d) => d.session === other.id)).toMatchObject({ action: 'kept', path: other.file });
        for (const d of kept) expect(d.path.startsWith(other.m.home + '/'), d.path).toBe(false);
      }
      expect(await fresh.m.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 0 });
    });

    it('a machine that learns of it: told of the agent\'s own file and what it can do; --apply-deletes keeps that file and loses no track', async () => {
      const remote = `git@github.com:acme/rm-learn-${agent}.git`;
      const a = make(rig.root, `${agent}-learn-a`, remote, 4);
      await a.m.login(rig.server);
      await a.m.ok(['sync', '--json']);
      const b = make(rig.root, `${agent}-learn-b`, remote, 5);
      await b.m.login(rig.server);
      expect(await b.m.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
      const file = a.fileOn(b.m);
      expect((await a.m.run(['rm', a.id, '--remote'])).code).toBe(0);

      // A push alone reads no feed: the server refuses the session (410), and the note names the agent's file.
      // Seen failing on old code: it named sessync's mirror.
      a.moreOn(b.m);
      const written = readFileSync(file, 'utf8');
      const refused = await b.m.run(['push']);
      expect(refused.code, refused.stderr).toBe(0);
      expect(refused.stdout).toContain('pushed 0 entries');
      expect(refused.stderr).toContain(`; ${agent}'s own file ${file} is kept`);
      expect(refused.stderr).not.toContain(b.m.home);

      // Seen failing on old code: the note named sessync's mirror under SESSYNC_HOME and told to run `sessync rm <id>`,
      // which refuses another agent's session.
      const told = await b.m.run(['sync']);
      expect(told.code, told.stderr).toBe(0);
      const note = told.stderr.split('\n').find((l) => l.includes(`session ${a.id} was deleted on the server`)) ?? '';
      expect(note, told.stderr).toContain(file);
      expect(note).not.toContain(b.m.home);
      expect(note).not.toContain(`sessync rm ${a.id}`);
      expect(note).toContain('never removes');

      // --apply-deletes cannot remove the agent's file and says so; it removes nothing of sessync's either, so the
      // session stays known here as deleted on the server. Seen failing on old code: action 'removed', named by the
      // agent's file that was still there, and sessync's mirror of it removed (made again by the next sync).
      const applied = await b.m.run(['sync', '--apply-deletes']);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).toContain(`${file} is kept (--apply-deletes leaves it): sessync never removes`);
      expect(applied.stdout).toContain('1 session deleted on the server kept here');
      const again = await b.m.ok(['sync', '--apply-deletes', '--json']);
      expect(again.deleted).toEqual([expect.objectContaining({ session: a.id, action: 'kept', path: file })]);
      expect(readFileSync(file, 'utf8')).toBe(written);

      // What the agent writes later is never pushed, by push alone (no feed read: it asks nothing, so nothing is
      // refused) or by sync.
      a.moreOn(b.m);
      for (const mode of ['push', 'sync', 'push']) expect(await b.m.ok([mode, '--json'])).toMatchObject({ failed: 0, pushedEntries: 0, ...(mode === 'push' ? { requests: 0 } : {}) });
      expect(await b.m.ok(['sync', '--apply-deletes', '--json'])).toMatchObject({ failed: 0, pushedEntries: 0, deleted: [expect.objectContaining({ session: a.id, action: 'kept', path: file })] });
      expect(existsSync(file)).toBe(true);
      const fresh = make(rig.root, `${agent}-learn-fresh`, remote, 6);
      await fresh.m.login(rig.server);
      expect(await fresh.m.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 }); // b's own session only
    });
  });
});
