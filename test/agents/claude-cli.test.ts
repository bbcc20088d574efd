// The real Claude Code CLI as the client: a session made with `claude -p` on machine A is synced, pulled on machine B at
// another path and resumed there with `claude -p --resume` (the model request holds A's messages); then turns on both,
// sync both: every line on both machines and both resume on the same branch.
import { mkdirSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { useServer } from '../sync/helpers.js';
import { ClaudeMachine, lineSet } from './claude-rig.js';
import { claude, conversationTexts, findClaude } from './claude-cli.js';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic.js';

const found = await findClaude();
/** The test's own prompts and the fake model's answers. */
const OURS = /^(?:(?:first|second|third) prompt on [AB]|answer .+|where are we|check on [AB])$/;
if (found.bin === null) {
  console.error(`\n*** The real Claude Code CLI cannot run on this machine: ${found.why}. The Claude Code CLI tests are SKIPPED. ***\n`);
}

describe('the real Claude Code CLI syncing through sessync', () => {
  it('the claude binary runs here (required when CI=true)', () => {
    if (process.env.CI === 'true') expect(found.bin, found.bin === null ? found.why : '').not.toBeNull();
  });

  describe.skipIf(found.bin === null)('two machines, project at two paths', () => {
    const rig = useServer(undefined, 'sessync-ccli-');
    let api: FakeAnthropic;
    beforeAll(async () => {
      api = await startFakeAnthropic();
    });
    afterAll(async () => {
      await api?.close();
    });

    const on = (m: ClaudeMachine, args: string[]) => {
      const home = join(m.home, '..', 'user-home');
      mkdirSync(home, { recursive: true });
      return claude(found.bin!, { cwd: m.project, home, configDir: m.claudeDir, api: api.url }, args);
    };

    it('create on A, resume on B; then turns on both converge: every line on both, one branch for both', async () => {
      const a = new ClaudeMachine(rig.root, 'a', { remote: 'git@github.com:Acme/Widget.git' });
      const b = new ClaudeMachine(rig.root, 'b', { remote: 'https://github.com/Acme/Widget.git' });
      await a.login(rig.server);
      await b.login(rig.server);

      api.replies.push('answer one from A');
      const created = JSON.parse(await on(a, ['-p', '--output-format', 'json', 'first prompt on A'])) as { session_id: string };
      const id = created.session_id;
      expect(a.files()).toContain(`${a.folder.split('/').pop()}/${id}.jsonl`);
      expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });

      expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
      expect(b.read(`${id}.jsonl`)).toBe(a.read(`${id}.jsonl`));
      expect(realpathSync(b.project)).not.toBe(realpathSync(a.project));

      api.replies.push('answer two from B');
      const before = api.requests.length;
      await on(b, ['-p', '--resume', id, 'second prompt on B']);
      const resumed = conversationTexts(api.requests[api.requests.length - 1]!, OURS);
      expect(api.requests.length).toBeGreaterThan(before);
      expect(resumed).toEqual(['user: first prompt on A', 'assistant: answer one from A', 'user: second prompt on B']);

      // B's turn goes back to A; then each machine takes a turn of its own before they sync again.
      expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      api.replies.push('answer three on A');
      await on(a, ['-p', '--resume', id, 'third prompt on A']);
      api.replies.push('answer three on B');
      await on(b, ['-p', '--resume', id, 'third prompt on B']);
      const aOwn = a.read(`${id}.jsonl`);
      const bOwn = b.read(`${id}.jsonl`);
      for (const m of [a, b, a, b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      for (const m of [b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });

      const aText = a.read(`${id}.jsonl`);
      const bText = b.read(`${id}.jsonl`);
      expect(aText.startsWith(aOwn)).toBe(true);
      expect(bText.startsWith(bOwn)).toBe(true);
      expect(new Set(lineSet(aText))).toEqual(new Set(lineSet(bText)));
      for (const l of [...lineSet(aOwn), ...lineSet(bOwn)]) {
        expect(aText.includes(l)).toBe(true);
        expect(bText.includes(l)).toBe(true);
      }
      expect(a.leaf(id)).toBe(b.leaf(id));

      // The real claude agrees: resumed on each machine, the model sees the same branch (B's turn, the newer one).
      api.replies.push('check on A');
      await on(a, ['-p', '--resume', id, 'where are we']);
      const fromA = conversationTexts(api.requests[api.requests.length - 1]!, OURS);
      api.replies.push('check on B');
      await on(b, ['-p', '--resume', id, 'where are we']);
      const fromB = conversationTexts(api.requests[api.requests.length - 1]!, OURS);
      expect(fromA).toEqual(fromB);
      expect(fromA.slice(0, -1)).toEqual([
        'user: first prompt on A',
        'assistant: answer one from A',
        'user: second prompt on B',
        'assistant: answer two from B',
        'user: third prompt on B',
        'assistant: answer three on B',
      ]);
    });

    it('a project path whose folder name passes 200 characters: the pulled session lands where claude itself writes', async () => {
      const a = new ClaudeMachine(rig.root, 'short', { remote: 'git@github.com:Acme/Long.git' });
      const deep = join(rig.root, 'long', ...Array.from({ length: 5 }, (_, i) => `a-rather-long-folder-name.for_project ${i} 😀`));
      const b = new ClaudeMachine(rig.root, 'long', { remote: 'git@github.com:Acme/Long.git', project: deep });
      await a.login(rig.server);
      await b.login(rig.server);
      api.replies.push('answer from A, long path');
      const id = (JSON.parse(await on(a, ['-p', '--output-format', 'json', 'first prompt on A'])) as { session_id: string }).session_id;
      await a.ok(['sync', '--json']);
      expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
      const folder = claudeProjectFolder(realpathSync(b.project));
      expect(folder.length).toBeGreaterThan(201);
      expect(readdirSync(join(b.claudeDir, 'projects'))).toEqual([folder]);
      // A new session claude starts here goes to the very folder sessync filed the pulled one under.
      api.replies.push('answer from B');
      const fresh = (JSON.parse(await on(b, ['-p', '--output-format', 'json', 'second prompt on B'])) as { session_id: string }).session_id;
      expect(readdirSync(join(b.claudeDir, 'projects'))).toEqual([folder]);
      expect(readdirSync(join(b.claudeDir, 'projects', folder)).filter((f) => f.endsWith('.jsonl')).sort()).toEqual([`${id}.jsonl`, `${fresh}.jsonl`].sort());
      api.replies.push('answer three on B');
      await on(b, ['-p', '--resume', id, 'third prompt on B']);
      expect(conversationTexts(api.requests[api.requests.length - 1]!, OURS)).toEqual(['user: first prompt on A', 'assistant: answer from A, long path', 'user: third prompt on B']);
    });
  });
});
