// An imported Claude Code share is a session of the importing project: its lines name that project's path as their
// cwd (the share's is the sharer's, redacted to ~/...), so status lists it there, a push and a pull on another clone put
// it in that machine's folder of the project, and the real claude resumes it.
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { ClaudeMachine, turn } from './claude-rig.js';
import { claude, conversationTexts, findClaude } from './claude-cli.js';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic.js';

const found = await findClaude();
if (found.bin === null) console.error(`\n*** test/agents/claude-import-project.test.ts: claude --resume step SKIPPED: ${found.why} ***\n`);
const S = '5e55e55e-1111-4222-8333-444444444444';

describe('import of a Claude Code share into a project at another path', () => {
  const rig = useServer(undefined, 'sessync-ccimpproj-');
  let api: FakeAnthropic | undefined;
  beforeAll(async () => {
    if (found.bin !== null) api = await startFakeAnthropic();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('is filed under the importing project: status, push, pull on another clone, claude --resume', async () => {
    // The sharer's session lives in the sharer's project, under their home (redacted to ~/... in the share).
    const a = new ClaudeMachine(rig.root, 'sharer', { remote: 'git@github.com:Acme/Sharer.git' });
    await a.login(rig.server);
    const aCwd = realpathSync(a.project);
    a.write(`${S}.jsonl`, turn(S, aCwd, null, 'first prompt', ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002'], '2026-01-01T10:00:00.000Z'));
    const shared = await a.ok(['share', S, '--json']);

    // The importer: another project (another repository) at another path, and a second clone of it elsewhere.
    const remote = 'git@github.com:Acme/Importer.git';
    const b = new ClaudeMachine(rig.root, 'importer-b', { remote });
    const c = new ClaudeMachine(rig.root, 'importer-c', { remote });
    await b.login(rig.server);
    await c.login(rig.server);
    const bCwd = realpathSync(b.project);
    const imported = await b.ok(['import', shared.url, '--json']);
    expect(imported.path).toBe(join(b.folder, `${imported.id}.jsonl`));
    const lines = readFileSync(imported.path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const withCwd = lines.filter((l) => 'cwd' in l);
    expect(withCwd.length).toBe(2);
    expect(withCwd.map((l) => l.cwd)).toEqual([bCwd, bCwd]); // seen failing on old code: "~/..." of the sharer
    expect(new Set(lines.map((l) => l.sessionId))).toEqual(new Set([imported.id]));

    // This project's status lists it (it is this project's session), with something to push.
    const st = (await b.ok(['status', '--json', '--agent', 'claude-code'])) as { sessions: { session: string }[] };
    expect(st.sessions.map((s) => s.session)).toContain(imported.id);
    expect((await b.ok(['push', '--agent', 'claude-code', '--json'])).failed ?? 0).toBe(0);

    // The other clone pulls it into its own folder of the same project.
    await c.ok(['pull', '--agent', 'claude-code', '--json']);
    expect(existsSync(join(c.folder, `${imported.id}.jsonl`))).toBe(true);
    expect(readdirSync(join(c.claudeDir, 'projects'))).toEqual([basename(c.folder)]);

    if (found.bin === null || api === undefined) return;
    const home = join(b.home, '..', 'user-home');
    mkdirSync(home, { recursive: true });
    api.replies.push('answer after the import');
    await claude(found.bin, { cwd: b.project, home, configDir: b.claudeDir, api: api.url }, ['-p', '--resume', imported.id, 'second prompt']);
    const seen = conversationTexts(api.requests[api.requests.length - 1]!, /^(?:first prompt|answer to first prompt|second prompt)$/);
    expect(seen).toEqual(['user: first prompt', 'assistant: answer to first prompt', 'user: second prompt']);
    // What claude appended names the same session and project as the imported lines: one session, one project.
    const after = readFileSync(imported.path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(after.length).toBeGreaterThan(lines.length);
    expect(new Set(after.filter((l) => typeof l.cwd === 'string').map((l) => l.cwd))).toEqual(new Set([bCwd]));
    expect(readdirSync(join(b.claudeDir, 'projects'))).toEqual([basename(b.folder)]);
  });
});
