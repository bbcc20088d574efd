// Table tests for sync planning: local status + server heads -> diff -> operations.
import { describe, expect, it } from 'vitest';
import { diffSessions, planSync, summarise, type LocalStatus } from '../../shared/sync-plan.js';
import type { Head } from '../../shared/wire.js';

const ME = 'hostA';
const L = (session: string, o: Partial<LocalStatus> = {}): LocalStatus => ({ session, size: 100, pushedOffset: 100, pendingSeq: null, cursor: {}, nextSeq: 1, ...o });
const H = (session: string, host: string, seq: number): Head => ({ session, host, seq });

describe('diffSessions + planSync', () => {
  const all = { push: true, pull: true, fetchRemoteOnly: true };
  const cases: { name: string; local: LocalStatus[]; heads: Head[]; opts?: Partial<typeof all> & { only?: Set<string> }; ops: string[] }[] = [
    { name: 'everything in sync: no operation', local: [L('s1', { cursor: { hostB: 2 }, nextSeq: 3 })], heads: [H('s1', ME, 2), H('s1', 'hostB', 2)], ops: [] },
    { name: 'local growth: push', local: [L('s1', { size: 150 })], heads: [], ops: ['push s1'] },
    { name: 'file shrank below the pushed offset (rewritten): push again', local: [L('s1', { size: 50 })], heads: [], ops: ['push s1'] },
    { name: 'pending batch: push resumes it', local: [L('s1', { pendingSeq: 1 })], heads: [], ops: ['push s1 (resume)'] },
    { name: 'other host ahead: pull', local: [L('s1', { cursor: { hostB: 1 } })], heads: [H('s1', 'hostB', 4)], ops: ['pull s1 3'] },
    { name: 'own batches never pulled', local: [L('s1')], heads: [H('s1', ME, 9)], ops: [] },
    { name: 'remote-only: fetch', local: [], heads: [H('s2', 'hostB', 2), H('s2', 'hostC', 1)], ops: ['fetch s2 3'] },
    { name: 'remote-only, not asked: nothing', local: [], heads: [H('s2', 'hostB', 2)], opts: { fetchRemoteOnly: false }, ops: [] },
    { name: 'remote-only but named by ref: fetch', local: [], heads: [H('s2', 'hostB', 2)], opts: { fetchRemoteOnly: false, only: new Set(['s2']) }, ops: ['fetch s2 2'] },
    { name: 'push only', local: [L('s1', { size: 200 })], heads: [H('s1', 'hostB', 1)], opts: { pull: false }, ops: ['push s1'] },
    { name: 'pull only', local: [L('s1', { size: 200 })], heads: [H('s1', 'hostB', 1)], opts: { push: false }, ops: ['pull s1 1'] },
    { name: 'scope excludes other sessions', local: [L('s1', { size: 200 }), L('s3', { size: 300 })], heads: [], opts: { only: new Set(['s3']) }, ops: ['push s3'] },
    { name: 'server lost our batches (head below nextSeq-1): push everything again from its head', local: [L('s1', { nextSeq: 6 })], heads: [H('s1', ME, 2)], ops: ['push s1 (reset to 3)'] },
    { name: 'server has never seen a session we think is pushed: push it again from seq 1', local: [L('s1', { nextSeq: 4 })], heads: [], ops: ['push s1 (reset to 1)'] },
    { name: 'server one batch ahead (ack lost in a crash): no reset', local: [L('s1', { nextSeq: 3 })], heads: [H('s1', ME, 3)], ops: [] },
    { name: 'heads not fetched (push only): no reset guessed', local: [L('s1', { nextSeq: 4 })], heads: [], opts: { pull: false, headsKnown: false } as never, ops: [] },
    { name: 'pushes come before pulls', local: [L('a', { cursor: {} }), L('b', { size: 101 })], heads: [H('a', 'hostB', 1)], ops: ['push b', 'pull a 1'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const ops = planSync(diffSessions(c.local, c.heads, ME), { ...all, ...c.opts });
      expect(ops.map((o) => (o.kind === 'push' ? `push ${o.session}${o.resumePending ? ' (resume)' : ''}${o.resetTo !== undefined ? ` (reset to ${o.resetTo})` : ''}` : `${o.kind} ${o.session} ${o.batches}`))).toEqual(c.ops);
    });
  }

  it('reports per-host waiting batches, own head, and totals', () => {
    const d = diffSessions([L('s1', { size: 180, cursor: { hostB: 1 } })], [H('s1', 'hostB', 3), H('s1', 'hostC', 2), H('s1', ME, 5), H('s9', 'hostB', 1)], ME);
    expect(d[0]).toMatchObject({ session: 's1', unpushedBytes: 80, waiting: { hostB: 2, hostC: 2 }, waitingBatches: 4, ownHead: 5 });
    expect(summarise(d)).toEqual({ sessions: 2, toPush: 1, unpushedBytes: 80, toPull: 2, waitingBatches: 5, remoteOnly: 1 });
  });
});
