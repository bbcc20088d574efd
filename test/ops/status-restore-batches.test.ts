// `status --json` of a session deleted here: restoreBatches is what `sessync restore` then fetches, this machine's own
// batches too (restore takes them; a session only this machine pushed showed 0). Real CLI processes, real `sessync serve`.
import { describe, expect, it } from 'vitest';
import { Machine, useServer } from '../sync/helpers.js';

describe('status restoreBatches (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-status-restore-');

  it("counts what restore fetches: this machine's own batches too", async () => {
    const a = new Machine(rig.root, 'own', { remote: 'git@github.com:acme/status-restore-own.git' });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one');
    await a.say(id, 'two');
    await a.ok(['push', '--json']);
    await a.ok(['rm', id, '--json']);
    const json = await a.ok(['status', '--json']);
    const row = json.sessions.find((r: { session: string }) => r.session === id);
    expect(row).toMatchObject({ deletedHere: true, waitingBatches: 0 });
    const restored = await a.ok(['restore', id, '--json']);
    const batches = restored.restored.reduce((n: number, r: { pulled: { batches: number } }) => n + r.pulled.batches, 0);
    expect(batches).toBeGreaterThan(0);
    expect(row.restoreBatches).toBe(batches);
  });
});
