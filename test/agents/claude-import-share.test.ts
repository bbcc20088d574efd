// Import of a Claude Code share: it lands in the subfolder its header names when that is a plain subfolder here; bad
// input (an entry that is not a Claude Code line of the session: a path outside it, another kind) refuses the whole
// import, and nothing is written.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { writeClaudeImport } from '../../cli/agents/claude-share.js';
import { buildSharePayload } from '../../shared/share-payload.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { tempDir } from '../helpers/cli.js';

const S = '12121212-3333-4444-8555-666666666666';
const header: SessionHeader = { type: 'session', version: 3, id: S, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/x', agent: 'claude-code' };
const line = (id: string, parentId: string | null, file: string, value: object): SessionEntry => ({ type: 'agent_line', agent: 'claude-code', id, parentId, timestamp: '', file, value });

describe('import of a Claude Code share', () => {
  const t = tempDir('sessync-ccimport-');
  afterAll(() => t.cleanup());
  const env = { CLAUDE_CONFIG_DIR: join(t.dir, 'claude') };

  it('writes the main file and the subagent files under the new session id', async () => {
    const payload = buildSharePayload(header, [
      line('u1', null, '', { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } }),
      line('agent-a.s1', 'u1', `${S}/subagents/agent-a.jsonl`, { type: 'user', uuid: 's1', isSidechain: true, message: { role: 'user', content: 'sub' } }),
    ]);
    const r = await writeClaudeImport(payload, env, join(t.dir, 'proj'));
    expect(r.entryCount).toBe(1);
    expect(existsSync(r.path)).toBe(true);
    expect(existsSync(join(r.path.replace(/\.jsonl$/, ''), 'subagents', 'agent-a.jsonl'))).toBe(true);
  });

  it('a share made in a subfolder of its repository (cwdInProject) lands in that subfolder here; a .git part lands at the top', async () => {
    const repo = join(realpathSync(t.dir), 'repo');
    execFileSync('git', ['init', '-q', repo]);
    mkdirSync(join(repo, 'pkg', 'web'), { recursive: true });
    const first = [line('u1', null, '', { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } })];
    const folderOf = async (sub: string) => dirname((await writeClaudeImport(buildSharePayload({ ...header, cwdInProject: sub }, first), env, repo)).path);
    expect(await folderOf('pkg/web')).toBe(join(t.dir, 'claude', 'projects', claudeProjectFolder(join(repo, 'pkg', 'web'))));
    expect(await folderOf('.git/hooks')).toBe(join(t.dir, 'claude', 'projects', claudeProjectFolder(repo)));
  });

  for (const [what, bad] of [
    ['a path outside the session', line('x', 'u1', '../../escape.jsonl', { type: 'user', uuid: 'x' })],
    ['another session\'s subagent file', line('x', 'u1', 'aaaaaaaa-3333-4444-8555-666666666666/subagents/agent-b.jsonl', { type: 'user', uuid: 'x' })],
    ['a pi entry', { type: 'message', id: 'x', parentId: 'u1', timestamp: '', message: { role: 'user', content: 'x' } } as SessionEntry],
  ] as const) {
    it(`refuses ${what}, and writes nothing`, async () => {
      const folder = join(t.dir, 'claude', 'projects');
      const before = existsSync(folder) ? readdirSync(folder, { recursive: true }).length : 0;
      const payload = buildSharePayload(header, [line('u1', null, '', { type: 'user', uuid: 'u1', parentUuid: null }), bad]);
      await expect(writeClaudeImport(payload, env, join(t.dir, 'proj'))).rejects.toThrow(/nothing was written/);
      expect(existsSync(folder) ? readdirSync(folder, { recursive: true }).length : 0).toBe(before);
    });
  }
});
