// The real Claude Code CLI as the client (the agent CLI conformance body, with claude's commands), and a project path
// past Claude Code's 200-character folder-name rule.
import { mkdirSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { useServer } from '../sync/helpers.js';
import { ClaudeMachine } from './claude-rig.js';
import { agentCliConformance } from './agent-cli.case.js';
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

    agentCliConformance(
      {
        name: 'claude',
        machine: (root, name, remote) => {
          const m = new ClaudeMachine(root, name, { remote });
          return Object.assign(m, { sessionText: (id: string) => m.read(`${id}.jsonl`), agentLeaf: (id: string) => m.leaf(id) });
        },
        reply: (text) => api.replies.push(text),
        create: async (m, prompt) => (JSON.parse(await on(m, ['-p', '--output-format', 'json', prompt])) as { session_id: string }).session_id,
        resume: async (m, id, prompt) => void (await on(m, ['-p', '--resume', id, prompt])),
        lastConversation: () => conversationTexts(api.requests[api.requests.length - 1]!, OURS),
      },
      rig,
    );

    it('a session started in a subfolder of the project resumes in that subfolder on B, pulled and imported from a share', async () => {
      const remote = 'git@github.com:Acme/Sub.git';
      const a = new ClaudeMachine(rig.root, 'sub-a', { remote });
      const b = new ClaudeMachine(rig.root, 'sub-b', { remote });
      await a.login(rig.server);
      await b.login(rig.server);
      for (const m of [a, b]) mkdirSync(join(m.project, 'pkg', 'web'), { recursive: true });
      const inSub = (m: ClaudeMachine, args: string[]) => {
        const home = join(m.home, '..', 'user-home');
        mkdirSync(home, { recursive: true });
        return claude(found.bin!, { cwd: join(m.project, 'pkg', 'web'), home, configDir: m.claudeDir, api: api.url }, args);
      };
      api.replies.push('answer from A in pkg/web');
      const id = (JSON.parse(await inSub(a, ['-p', '--output-format', 'json', 'first prompt on A'])) as { session_id: string }).session_id;
      expect(await a.ok(['sync', '--all', '--json'])).toMatchObject({ failed: 0 });
      // B syncs from the project's root: the session lands in Claude Code's folder for B's pkg/web, not the root's.
      expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
      const subFolder = claudeProjectFolder(realpathSync(join(b.project, 'pkg', 'web')));
      // Seen failing on old code: the session was filed under the root's folder (and claude in pkg/web did not find it).
      expect(readdirSync(join(b.claudeDir, 'projects'))).toEqual([subFolder]);
      api.replies.push('answer two on B');
      await inSub(b, ['-p', '--resume', id, 'second prompt on B']);
      expect(conversationTexts(api.requests[api.requests.length - 1]!, OURS)).toEqual(['user: first prompt on A', 'assistant: answer from A in pkg/web', 'user: second prompt on B']);

      // A share of it, imported on B from the root, is a new session of pkg/web too.
      const url = ((await a.ok(['share', id, '--json'])) as { url: string }).url;
      const imported = (await b.ok(['import', url, '--json'])) as { id: string; path: string };
      expect(imported.path.startsWith(join(b.claudeDir, 'projects', subFolder) + '/'), imported.path).toBe(true);
      api.replies.push('answer three on B');
      await inSub(b, ['-p', '--resume', imported.id, 'third prompt on B']);
      expect(conversationTexts(api.requests[api.requests.length - 1]!, OURS)).toEqual(['user: first prompt on A', 'assistant: answer from A in pkg/web', 'user: third prompt on B']);
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
