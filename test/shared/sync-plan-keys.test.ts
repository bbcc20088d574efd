// Host and session ids that are Object.prototype names (constructor, toString, __proto__, ...) plan like any other id.
import { describe, expect, it } from 'vitest';
import { cursorSeq, diffSessions, headsBySession, planSync, type LocalStatus } from '../../shared/sync-plan.js';
import type { Head } from '../../shared/wire.js';

const ME = 'hostA';
const PROTO_NAMES = ['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'];
const L = (session: string, o: Partial<LocalStatus> = {}): LocalStatus => ({ session, size: 100, pushedOffset: 100, pendingSeq: null, cursor: {}, nextSeq: 1, ...o });
const all = { push: true, pull: true, fetchRemoteOnly: true };

describe('prototype names as ids in sync planning', () => {
  for (const host of PROTO_NAMES) {
    it(`host "${host}" with batches the local file lacks: a pull of all of them is planned`, () => {
      const d = diffSessions([L('s1')], [{ session: 's1', host, seq: 3 }], ME);
      expect(d[0]!.waitingBatches).toBe(3);
      expect(Object.hasOwn(d[0]!.waiting, host)).toBe(true);
      expect(d[0]!.waiting[host]).toBe(3);
      expect(planSync(d, all)).toEqual([{ kind: 'pull', session: 's1', batches: 3 }]);
    });

    it(`host "${host}" already merged up to its head (own cursor key): nothing to pull`, () => {
      const cursor = JSON.parse(`{${JSON.stringify(host)}:3}`) as Record<string, number>;
      expect(cursorSeq(cursor, host)).toBe(3);
      const d = diffSessions([L('s1', { cursor })], [{ session: 's1', host, seq: 3 }], ME);
      expect(d[0]!.waitingBatches).toBe(0);
      expect(planSync(d, all)).toEqual([]);
    });

    it(`session "${host}" only on the server: fetched`, () => {
      const heads: Head[] = [{ session: host, host: 'hostB', seq: 2 }];
      expect(planSync(diffSessions([], heads, ME), all)).toEqual([{ kind: 'fetch', session: host, batches: 2 }]);
    });

    it(`this machine's own host id "${host}": own head read, never pulled`, () => {
      const d = diffSessions([L('s1', { nextSeq: 3 })], [{ session: 's1', host, seq: 2 }], host);
      expect(d[0]).toMatchObject({ ownHead: 2, serverBehind: false, waitingBatches: 0 });
      const fresh = diffSessions([L('s1', { nextSeq: 3 })], [], host);
      expect(fresh[0]).toMatchObject({ ownHead: 0, serverBehind: true });
    });
  }

  it('headsBySession keeps the highest seq per host, whatever the host is called', () => {
    const heads: Head[] = PROTO_NAMES.flatMap((host) => [{ session: 's1', host, seq: 2 }, { session: 's1', host, seq: 5 }]);
    const m = headsBySession(heads).get('s1')!;
    for (const host of PROTO_NAMES) expect(m.get(host)).toBe(5);
  });

  it('cursorSeq reads own keys only', () => {
    for (const host of PROTO_NAMES) expect(cursorSeq({}, host)).toBe(0);
    expect(cursorSeq({ hostB: 4 }, 'hostB')).toBe(4);
  });
});
