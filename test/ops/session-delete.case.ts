// Deleting a session everywhere, run on Node (memory, file system) and inside workerd (R2): objects, tombstone, 410s, crashes.
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import { keys } from '../../shared/keys.js';
import { ChangesResponseSchema, DeleteSessionResponseSchema } from '../../shared/wire.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, makeBatch, metaFor } from '../worker/routes-helpers.js';
import { FailingStore } from './failing-store.js';
import { listAll } from '../../worker/session-data.js';

const ADMIN = TEST_ADMIN_SECRET;
const DAY = 24 * 3600 * 1000;

const keysUnder = listAll;

export function describeSessionDelete(name: string, open: () => Promise<{ store: BlobStore }>): void {
  describe(`delete a session everywhere [${name}]`, () => {
    let store: FailingStore;
    let alice: TestClient;
    let bob: TestClient;
    let anon: TestClient;
    let account: string;

    beforeAll(async () => {
      store = new FailingStore((await open()).store);
      const f = appFetcher(createApp({ store, adminSecret: ADMIN }));
      const a = await adminCreateAccount(f, ADMIN);
      account = a.account;
      alice = new TestClient(f, a.token);
      bob = new TestClient(f, (await adminCreateAccount(f, ADMIN)).token);
      anon = new TestClient(f);
    });

    /** A session with batches from two hosts, its meta and one share; returns the share's token. */
    async function seed(session: string, batches = 2): Promise<string> {
      for (let seq = 1; seq <= batches; seq++) expect((await alice.push(await makeBatch({ session, host: 'h1', seq, meta: metaFor(session) }))).status).toBe(201);
      expect((await alice.push(await makeBatch({ session, host: 'h2', seq: 1 }))).status).toBe(201);
      const share = await alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + DAY).toISOString(), session });
      expect(share.status).toBe(201);
      return share.json.token as string;
    }

    async function objectsOf(session: string): Promise<string[]> {
      return [...(await keysUnder(store, keys.sessionPrefix(account, session))), ...(await keysUnder(store, keys.sessionHeadsPrefix(account, session)))];
    }

    async function feed() {
      return ChangesResponseSchema.parse((await alice.call('GET', '/v1/changes')).json);
    }

    it('removes batches, heads, meta and shares, leaves a tombstone in the feed; pushes, reads and shares answer 410', async () => {
      const token = await seed('del-1');
      await seed('keep-1');
      const r = await alice.call('DELETE', '/v1/sessions/del-1', { host: 'laptop' });
      expect(r.status).toBe(200);
      const body = DeleteSessionResponseSchema.parse(r.json);
      expect(body).toMatchObject({ session: 'del-1', host: 'laptop', complete: true, sharesRevoked: 1 });
      expect(body.removed).toBe(6); // meta, 3 batches, the heads of h1 and h2
      expect(await objectsOf('del-1')).toEqual([]);
      const f = await feed();
      expect(f.heads.some((h) => h.session === 'del-1')).toBe(false);
      expect(f.heads.some((h) => h.session === 'keep-1')).toBe(true);
      expect(f.deleted).toEqual([{ session: 'del-1', deletedAt: body.deletedAt, host: 'laptop' }]);

      const push = await alice.push(await makeBatch({ session: 'del-1', host: 'h3', seq: 1, meta: metaFor('del-1') }));
      expect(push.status).toBe(410);
      expect(push.json.error.message).toMatch(/deleted from the server .* --undelete/);
      const meta = await alice.call('GET', '/v1/sessions/del-1');
      expect(meta.status).toBe(410);
      const blob = await anon.call('GET', `/v1/shares/${token}/blob`);
      expect(blob.status).toBe(410);
      expect(blob.json.error.message).toMatch(/session of this share was deleted/);
      expect((await keysUnder(store, 'shares/')).length).toBeGreaterThan(0);
      const shares = (await alice.call('GET', '/v1/shares')).json.shares as { session?: string }[];
      expect(shares.some((s) => s.session === 'del-1')).toBe(false);
      expect(shares.some((s) => s.session === 'keep-1')).toBe(true);
      // A share of a deleted session cannot be made either.
      expect((await alice.call('POST', '/v1/shares', { ciphertext: 'eA', expiresAt: new Date(Date.now() + DAY).toISOString(), session: 'del-1' })).status).toBe(410);
      // Deleting it again is harmless and says so.
      expect((await alice.call('DELETE', '/v1/sessions/del-1', { host: 'other' })).json).toMatchObject({ complete: true, removed: 0, host: 'laptop' });
    });

    it('damaged share pointers: one is found through its index entry and revoked, one found by nothing is named on every answer; the deletion completes', async () => {
      const found = await seed('del-ptr');
      const made = await alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + DAY).toISOString(), session: 'del-ptr' });
      const lost = made.json as { token: string; id: string };
      const ids = (await keysUnder(store, `${keys.sessionPrefix(account, 'del-ptr')}shares/`)).map((k) => k.split('/').pop()!);
      const cut = new TextEncoder().encode('{"id":"');
      for (const id of ids) await store.put(keys.sessionShare(account, 'del-ptr', id), cut);
      await store.put(keys.accountShare(account, lost.id), cut);
      // Step by step, as a client does (each step is bounded), adding up what each says.
      const steps = [];
      do {
        const r = await alice.call('DELETE', '/v1/sessions/del-ptr', { host: 'laptop' });
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        steps.push(DeleteSessionResponseSchema.parse(r.json));
      } while (!steps[steps.length - 1]!.complete && steps.length < 5);
      const last = steps[steps.length - 1]!;
      expect(last.complete).toBe(true);
      expect(steps.reduce((n, x) => n + x.sharesRevoked, 0)).toBe(1);
      const warning = [{ id: lost.id, message: expect.stringMatching(/could not be revoked.*sessync unshare <link>/) }];
      // Only the share it could not revoke (the revoked one is not named): once, by the step that found it, and on the
      // last answer whatever step found it.
      expect(steps.flatMap((x) => x.sharesNotRevoked ?? [])).toEqual(warning);
      expect(last.sharesStillUnrevoked).toEqual(warning);
      // Objects of the session: meta, 3 batches, 2 heads, and the pointer of the share it could not revoke.
      expect(steps.reduce((n, x) => n + x.removed, 0)).toBe(7);
      expect(await objectsOf('del-ptr')).toEqual([]);
      expect((await anon.call('GET', `/v1/shares/${found}/blob`)).status).toBe(410);
      // The answer that said it may be lost: a retry, and a later call, say it again.
      for (const host of ['laptop', 'desktop']) {
        const again = await alice.call('DELETE', '/v1/sessions/del-ptr', { host });
        expect(again.json).toMatchObject({ complete: true, removed: 0, sharesRevoked: 0, sharesStillUnrevoked: warning });
        expect(again.json.sharesNotRevoked).toBeUndefined();
      }
      // Not silently live: named above, listed as damaged, and revoked by its link; then no answer names it.
      expect((await alice.call('GET', '/v1/shares')).json.damaged).toEqual([expect.objectContaining({ id: lost.id, revocableById: false })]);
      expect((await alice.call('DELETE', `/v1/shares/${lost.token}`)).status).toBe(200);
      expect((await anon.call('GET', `/v1/shares/${lost.token}/blob`)).status).toBe(410);
      const after = DeleteSessionResponseSchema.parse((await alice.call('DELETE', '/v1/sessions/del-ptr', { host: 'laptop' })).json);
      expect(after).toMatchObject({ complete: true });
      expect(after.sharesStillUnrevoked).toBeUndefined();
      expect(await keysUnder(store, keys.unrevokedPrefix(account))).toEqual([]);
    });

    it('a share the deletion could not revoke is named until it is revoked, across an undelete and a second deletion', async () => {
      await seed('del-undo');
      const made = await alice.call('POST', '/v1/shares', { ciphertext: 'Y2lwaGVy', expiresAt: new Date(Date.now() + DAY).toISOString(), session: 'del-undo' });
      const lost = made.json as { token: string; id: string };
      const cut = new TextEncoder().encode('{"id":"');
      await store.put(keys.sessionShare(account, 'del-undo', lost.id), cut);
      await store.put(keys.accountShare(account, lost.id), cut);
      let r;
      do r = DeleteSessionResponseSchema.parse((await alice.call('DELETE', '/v1/sessions/del-undo', { host: 'laptop' })).json);
      while (!r.complete);
      expect(r.sharesStillUnrevoked?.map((x) => x.id)).toEqual([lost.id]);
      expect((await alice.call('POST', '/v1/sessions/del-undo/undelete')).json).toEqual({ session: 'del-undo', undeleted: true });
      // Its link still opens: the undelete keeps the note of it.
      expect((await anon.call('GET', `/v1/shares/${lost.token}/blob`)).status).toBe(200);
      expect(await keysUnder(store, keys.sessionUnrevokedPrefix(account, 'del-undo'))).toHaveLength(1);
      // Pushed again and deleted again: the share is still named, and still listed as damaged.
      expect((await alice.push(await makeBatch({ session: 'del-undo', host: 'h1', seq: 1, meta: metaFor('del-undo') }))).status).toBe(201);
      do r = DeleteSessionResponseSchema.parse((await alice.call('DELETE', '/v1/sessions/del-undo', { host: 'laptop' })).json);
      while (!r.complete);
      expect(r.sharesStillUnrevoked?.map((x) => x.id)).toEqual([lost.id]);
      expect((await alice.call('GET', '/v1/shares')).json.damaged).toContainEqual(expect.objectContaining({ id: lost.id }));
      // Revoked by its link: then no answer names it.
      expect((await alice.call('DELETE', `/v1/shares/${lost.token}`)).status).toBe(200);
      r = DeleteSessionResponseSchema.parse((await alice.call('DELETE', '/v1/sessions/del-undo', { host: 'laptop' })).json);
      expect(r.sharesStillUnrevoked).toBeUndefined();
    });

    it("another account's session answers 404 and nothing of it changes", async () => {
      await seed('del-2');
      const before = await objectsOf('del-2');
      const r = await bob.call('DELETE', '/v1/sessions/del-2', { host: 'thief' });
      expect(r.status).toBe(404);
      expect(r.json.error.message).toMatch(/session del-2 not found/);
      expect(await objectsOf('del-2')).toEqual(before);
      expect((await bob.call('DELETE', '/v1/sessions/no-such', { host: 'h' })).status).toBe(404);
      expect((await alice.call('DELETE', '/v1/sessions/del-2', {})).status).toBe(400);
    });

    it('a crash before any write of the deletion leaves it whole and listed, after any later one hidden; a retry completes', async () => {
      let sawWhole = false;
      let sawHidden = false;
      for (let n = 0; ; n++) {
        const session = `crash-${n}`;
        const token = await seed(session);
        const before = await objectsOf(session);
        store.arm(n);
        const r = await alice.call('DELETE', `/v1/sessions/${session}`, { host: 'laptop' });
        const fired = store.fired;
        store.disarm();
        if (!fired) {
          // n is past the last write: the deletion ran to its end.
          expect(r.json).toMatchObject({ complete: true });
          break;
        }
        expect(r.status).toBe(503);
        const f = await feed();
        const tombstoned = (f.deleted ?? []).some((t) => t.session === session);
        const listed = f.heads.some((h) => h.session === session);
        if (!tombstoned) {
          // Nothing removed: the whole session, still listed and readable.
          sawWhole = true;
          expect(listed).toBe(true);
          expect(await objectsOf(session)).toEqual(before);
          expect((await alice.call('GET', `/v1/sessions/${session}`)).status).toBe(200);
        } else {
          // Hidden from the feed and refused, never half a session on offer.
          sawHidden = true;
          expect(listed).toBe(false);
          expect((await alice.call('GET', `/v1/sessions/${session}`)).status).toBe(410);
        }
        const retry = await alice.call('DELETE', `/v1/sessions/${session}`, { host: 'laptop' });
        expect(retry.json).toMatchObject({ complete: true });
        expect(await objectsOf(session)).toEqual([]);
        expect((await anon.call('GET', `/v1/shares/${token}/blob`)).status).toBe(410);
        expect(n).toBeLessThan(50);
      }
      expect(sawWhole && sawHidden).toBe(true);
    });

    it('a session of many batches goes in bounded steps; undelete waits for the last, then the session can be pushed again', async () => {
      await seed('big-1', 45);
      const first = DeleteSessionResponseSchema.parse((await alice.call('DELETE', '/v1/sessions/big-1', { host: 'h1' })).json);
      expect(first.complete).toBe(false);
      expect(first.removed).toBeGreaterThan(0);
      // Not finished: the session cannot be put back yet, and says how to finish.
      const early = await alice.call('POST', '/v1/sessions/big-1/undelete');
      expect(early.status).toBe(409);
      expect(early.json.error.message).toMatch(/still being deleted.*rm big-1 --remote/);
      let steps = 1;
      for (;;) {
        const r = DeleteSessionResponseSchema.parse((await alice.call('DELETE', '/v1/sessions/big-1', { host: 'h1' })).json);
        steps++;
        if (r.complete) break;
        expect(steps).toBeLessThan(10);
      }
      expect(await objectsOf('big-1')).toEqual([]);
      expect((await alice.call('POST', '/v1/sessions/big-1/undelete')).json).toEqual({ session: 'big-1', undeleted: true });
      expect((await feed()).deleted ?? []).not.toContainEqual(expect.objectContaining({ session: 'big-1' }));
      expect((await alice.push(await makeBatch({ session: 'big-1', host: 'h1', seq: 1, meta: metaFor('big-1') }))).status).toBe(201);
      expect((await feed()).heads).toContainEqual({ session: 'big-1', host: 'h1', seq: 1 });
      // Undeleting a session that is not deleted changes nothing.
      expect((await alice.call('POST', '/v1/sessions/big-1/undelete')).json).toEqual({ session: 'big-1', undeleted: false });
    });
  });
}
