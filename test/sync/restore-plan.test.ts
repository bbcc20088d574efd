// restorePlan and startedOver as pure steps: which deleted-here sessions a restore fetches whole, and from what state.
import { describe, expect, it } from 'vitest';
import { restoreMark, restorePlan, startedOver } from '../../cli/sync/restore-plan.js';
import type { DroppedSession } from '../../cli/sync/dropped.js';
import { diffSessions, planSync, type SyncOp } from '../../shared/sync-plan.js';

const drop = (session: string): [string, DroppedSession] => [session, { session, path: `/gone/${session}.jsonl`, newOnServer: 0 }];

describe('restorePlan', () => {
  const dropped = new Map([drop('s1'), drop('s2'), drop('s3')]);
  const heads = [
    { session: 's1', host: 'me', seq: 2 },
    { session: 's1', host: 'other', seq: 3 },
    { session: 's2', host: 'other', seq: 1 },
    { session: 'live', host: 'other', seq: 4 },
  ];

  it('fetches the named session whole (its own batches counted), and leaves the other deleted ones dropped', () => {
    const planned: SyncOp[] = [{ kind: 'fetch', session: 's1', batches: 3 }];
    const r = restorePlan(planned, dropped, new Set(['s1']), heads);
    expect(r.planned).toEqual([{ kind: 'fetch', session: 's1', batches: 5, fromStart: true }]);
    expect([...r.dropped.keys()]).toEqual(['s2', 's3']);
  });

  it('a session only this machine pushed gets a fetch (a sync plans none for it)', () => {
    const r = restorePlan([], dropped, new Set(['s1']), [{ session: 's1', host: 'me', seq: 2 }]);
    expect(r.planned).toEqual([{ kind: 'fetch', session: 's1', batches: 2, fromStart: true }]);
  });

  it('a named session the server holds no batch of stays dropped; other ops are kept as they are', () => {
    const live: SyncOp = { kind: 'pull', session: 'live', batches: 4 };
    const r = restorePlan([live], dropped, new Set(['s3', 'live']), heads);
    expect(r.planned).toEqual([live]);
    expect([...r.dropped.keys()]).toEqual(['s1', 's2', 's3']);
  });
});

describe('startedOver', () => {
  it('forgets what the old file had and keeps the next seq', () => {
    const st = startedOver({ session: 's', path: '/p', pushedOffset: 900, nextSeq: 7, cursor: { other: 3 }, skipIds: ['x'], pending: { seq: 7, batchId: 'b', entryCount: 1, sha256: 'h', endOffset: 950 }, tail: { offset: 900, hash: 'h' }, metaSent: true });
    expect(st).toEqual({ session: 's', path: '/p', pushedOffset: 0, nextSeq: 7, cursor: {}, skipIds: [], pending: null, metaSent: true });
    expect('tail' in st).toBe(false);
  });
});

describe('a restore cut short (this host in the cursor)', () => {
  const heads = [{ session: 's', host: 'me', seq: 50 }];
  const local = (cursor: Record<string, number>) => [{ session: 's', size: 100, pushedOffset: 100, pendingSeq: null, cursor, nextSeq: 51 }];
  const plan = { push: true, pull: true, fetchRemoteOnly: false };

  it('pulls this host\'s own batches from where it stopped; without it, a host\'s own batches are never pulled', () => {
    expect(planSync(diffSessions(local({ me: 40 }), heads, 'me'), plan)).toEqual([{ kind: 'pull', session: 's', batches: 10 }]);
    expect(planSync(diffSessions(local({}), heads, 'me'), plan)).toEqual([]);
  });

  it('the mark keeps the old offsets, sets every cursor to 0 and names this host', () => {
    const mark = restoreMark({ session: 's', path: '/p', pushedOffset: 900, nextSeq: 7, cursor: { other: 3 }, skipIds: [], pending: null, tail: { offset: 900, hash: 'h' }, metaSent: true }, 'me');
    expect({ ...mark.cursor }).toEqual({ me: 0 });
    expect(mark).toMatchObject({ pushedOffset: 900, nextSeq: 7, tail: { offset: 900, hash: 'h' } });
  });
});
