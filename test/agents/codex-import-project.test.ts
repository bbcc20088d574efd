// An imported Codex share is a session of the importing project (its new session_meta names this project's path), so
// status lists it there and a push and a pull on another clone of the project put it in that machine's Codex folder.
import { readFileSync, realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { msg, startRollout } from './codex-rig.js';
import { ShareMachine } from './codex-share-rig.js';

const SHARED = '01a2cccc-1111-7222-8333-444444444444';
const turnContext = (cwd: string) => JSON.stringify({ timestamp: '2026-01-01T00:00:01.500Z', type: 'turn_context', payload: { cwd, approval_policy: 'never', model: 'fake-model' } });

describe('import of a Codex share into a project at another path', () => {
  const rig = useServer(undefined, 'sessync-cximpproj-');

  it('is filed under the importing project: status, push, pull on another clone', async () => {
    const a = new ShareMachine(rig.root, 'sharer', { remote: 'git@github.com:Acme/CxSharer.git' });
    await a.login(rig.server);
    startRollout(a, SHARED, turnContext(a.project), msg('hello from the sharer', '2026-01-01T00:00:02.000Z'));
    const shared = await a.ok(['share', SHARED, '--json']);

    const remote = 'git@github.com:Acme/CxImporter.git';
    const b = new ShareMachine(rig.root, 'importer-b', { remote });
    const c = new ShareMachine(rig.root, 'importer-c', { remote });
    await b.login(rig.server);
    await c.login(rig.server);
    const imported = await b.ok(['import', shared.url, '--json']);
    const lines = readFileSync(imported.path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; payload: { cwd?: string } });
    expect(lines[0]!.payload.cwd).toBe(realpathSync(b.project));
    // Where Codex records the turn's cwd, it is this project's too, as Codex writes it for a session of this project.
    expect(lines.filter((l) => l.type === 'turn_context').map((l) => l.payload.cwd)).toEqual([realpathSync(b.project)]);

    const st = (await b.ok(['status', '--json'])) as { sessions: { session: string }[] };
    expect(st.sessions.map((s) => s.session)).toContain(imported.id);
    expect((await b.ok(['push', '--json'])).failed ?? 0).toBe(0);
    await c.ok(['pull', '--json']);
    expect(c.rollouts().filter((r) => r.endsWith(`-${imported.id}.jsonl`))).toHaveLength(1);
    expect((await c.ok(['list', '--json'])).map((r: { id: string }) => r.id)).toContain(imported.id);
  });
});
