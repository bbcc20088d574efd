// `sessync shares` and `unshare` as real processes against a real local server whose share index entries are damaged: listed as damaged, with what to do, and revocable.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { branchySession, startHarness, type Harness } from './share-harness.js';
import { keys } from '../../shared/keys.js';
import { BLOBS_DIR } from '../../worker/local-server.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { sha256Hex } from '../../worker/sha256.js';

let h: Harness;
let store: FsStore;

beforeAll(async () => {
  h = await startHarness();
  store = new FsStore(join(h.dataDir, BLOBS_DIR));
});
afterAll(async () => {
  await h?.close();
});

async function json(args: string[]): Promise<any> {
  const r = await h.cli([...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return r.json();
}

async function share(session: string): Promise<{ url: string; id: string; token: string }> {
  const made = await json(['share', session, '--no-redact']);
  return { ...made, token: new URL(made.url).pathname.split('/').pop()! };
}

const blob = async (s: { token: string }) => (await fetch(`${h.server.url}/v1/shares/${s.token}/blob`)).status;

describe('shares whose index entry on the server is damaged', () => {
  it('are listed as damaged (human and --json) with what to do; unshare by id works when the share record is reachable, else by the link', async () => {
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000000d1');
    h.writeSession(s.header, s.entries);
    const sound = await share(s.header.id);
    const lost = await share(s.header.id);
    const cutLate = await share(s.header.id);
    const indexKey = (id: string) => keys.accountShare(h.server.account, id);
    await store.put(indexKey(lost.id), new TextEncoder().encode('[1,2,3]'));
    const whole = (await store.get(indexKey(cutLate.id)))!.body;
    // A write cut after the token's hash: the rest of the record is lost.
    await store.put(indexKey(cutLate.id), whole.subarray(0, Buffer.from(whole).indexOf('"session"')));

    const listed = await json(['shares']);
    expect(listed.shares.map((x: { id: string }) => x.id)).toEqual([sound.id]);
    expect(listed.damaged).toEqual(
      expect.arrayContaining([
        { id: lost.id, status: 'unknown', revocableById: false, message: expect.stringMatching(/damaged.*may still open.*sessync unshare <link>/) },
        { id: cutLate.id, status: 'active', created: expect.any(String), expiresAt: expect.any(String), revoked: false, revocableById: true, message: expect.stringContaining(`\`sessync unshare ${cutLate.id}\` revokes it`) },
      ]),
    );
    expect(listed.damaged).toHaveLength(2);
    const human = await h.cli(['shares']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^${sound.id}  active `, 'm'));
    expect(human.stdout).toMatch(new RegExp(`^${lost.id}  damaged  status unknown: .*sessync unshare <link>`, 'm'));
    expect(human.stdout).toMatch(new RegExp(`^${cutLate.id}  damaged  active, expires \\S+: .*sessync unshare ${cutLate.id}`, 'm'));

    // By id: the reachable one is revoked; the other is refused with what to do instead, then revoked by its link.
    expect(await json(['unshare', cutLate.id])).toMatchObject({ revoked: true, id: cutLate.id });
    expect(await blob(cutLate)).toBe(410);
    const refused = await h.cli(['unshare', lost.id]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/damaged.*revoke it by its link/);
    expect(await blob(lost)).toBe(200);
    expect(await json(['unshare', lost.url])).toMatchObject({ revoked: true, id: lost.id });
    expect(await blob(lost)).toBe(410);

    const after = await json(['shares']);
    expect(after.damaged).toEqual([]);
    expect(after.shares.map((x: { id: string }) => x.id)).toEqual([sound.id]);
    expect(await blob(sound)).toBe(200);
  }, 60_000);

  it('index entry and share record both damaged: unshare by id where the entry holds the hash, by the link where the record names the account; the other way says which to use', async () => {
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000000d2');
    h.writeSession(s.header, s.entries);
    const byId = await share(s.header.id);
    const byLink = await share(s.header.id);
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    const hashOf = (x: { token: string }) => sha256Hex(x.token);
    const cut = async (key: string, after: string, n: number) => {
      const whole = (await store.get(key))!.body;
      await store.put(key, whole.subarray(0, dec.decode(whole).indexOf(after) + after.length + n));
    };
    const indexKey = (id: string) => keys.accountShare(h.server.account, id);
    await cut(indexKey(byId.id), await hashOf(byId), 1);
    await store.put(keys.share(await hashOf(byId)), enc.encode('[1,2,3]'));
    await store.put(indexKey(byLink.id), enc.encode('[1,2,3]'));
    await cut(keys.share(await hashOf(byLink)), h.server.account, 2);
    expect(await blob(byId)).toBe(422);
    expect(await blob(byLink)).toBe(422);

    const listed = await json(['shares']);
    expect(listed.damaged).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: byId.id, revocableById: true, message: expect.stringMatching(/both damaged, so its link cannot open/) }),
        expect.objectContaining({ id: byLink.id, revocableById: false }),
      ]),
    );
    // The wrong way round says the other; the right way revokes, and the link answers like any revoked one.
    const wrongLink = await h.cli(['unshare', byId.url]);
    expect(wrongLink.code).not.toBe(0);
    expect(wrongLink.stderr).toMatch(/Revoke it by its id if .sessync shares. lists it/);
    expect(await json(['unshare', byId.id])).toMatchObject({ revoked: true, id: byId.id });
    expect(await blob(byId)).toBe(410);
    const wrongId = await h.cli(['unshare', byLink.id]);
    expect(wrongId.code).not.toBe(0);
    expect(wrongId.stderr).toMatch(/revoke it by its link/);
    expect(await json(['unshare', byLink.url])).toMatchObject({ revoked: true, id: byLink.id });
    expect(await blob(byLink)).toBe(410);
    expect((await json(['shares'])).damaged).toEqual([]);
  }, 60_000);
});
