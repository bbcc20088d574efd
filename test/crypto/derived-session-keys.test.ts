// Session data keys derived from the account key and the session id: the same on every machine and after a crash, while
// sessions whose meta holds another key (made by an older client, or before a rotation) keep it and still sync.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { serverKey } from '../../cli/sync/session-sync-state.js';
import {
  deriveKeys,
  deriveSessionKey,
  importAccountKey,
  newAccountKey,
  newSessionKey,
  openBatchBytes,
  sealBatchBytes,
  unwrapSessionKey,
  type DerivedKeys,
} from '../../shared/sync-crypto.js';
import { decodeBatchRecord, encodeBatchRecord, isDamaged } from '../../worker/session-data.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { storedKeys } from '../worker/routes-helpers.js';
import { Machine, entrySet, plantSession, startNodeServer, useServer, type TestServer } from '../sync/helpers.js';
import { pendingLeft, runUntilKilled } from '../sync/kill-rig.js';
import { REMOTE, copySession, encryptedPair } from './crypto-rig.js';

const raw = async (k: CryptoKey) => Buffer.from(await crypto.subtle.exportKey('raw', k)).toString('hex');

/** The server's file store, opened beside it (whatever layout it keeps its files in). */
async function serverStore(server: TestServer): Promise<FsStore> {
  const store = new FsStore(join(server.dataDir!, 'blobs'));
  await store.open();
  return store;
}

/** The keys of a session's batches on the server, every host's, sorted. */
async function serverBatchKeys(server: TestServer, account: string, id: string): Promise<string[]> {
  return storedKeys(await serverStore(server), `a/${account}/s/${id}/b/`);
}

function storedMeta(server: TestServer, id: string) {
  return new ApiClient({ url: server.url, token: server.token }).sessionMeta(id);
}

/** Every machine holds the same entries of the session, and none of its syncs met a batch it could not open. */
async function converged(machines: Machine[], id: string): Promise<void> {
  for (const m of [...machines, ...machines]) {
    const r = await m.run(['sync']); // without --json: its notes (a batch passed over) go to stderr
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/fails authentication|passed over/);
  }
  const want = [...entrySet(machines[0]!.fileOf(id)).entries()].sort();
  for (const m of machines.slice(1)) expect([...entrySet(m.fileOf(id)).entries()].sort()).toEqual(want);
}

describe('deriveSessionKey', () => {
  it('is the same for the same account key and session id, another for another id or account key, and unwraps from its wrapped form', async () => {
    const account = newAccountKey();
    const [k1, k2] = [await deriveKeys(account), await deriveKeys({ ...account, raw: account.raw.slice() })];
    const a = await deriveSessionKey(k1, 's-1');
    const again = await deriveSessionKey(k2, 's-1');
    expect(again.wrappedKey).toBe(a.wrappedKey);
    expect(await raw(again.key)).toBe(await raw(a.key));
    expect((await deriveSessionKey(k1, 's-2')).wrappedKey).not.toBe(a.wrappedKey);
    expect((await deriveSessionKey(await deriveKeys(newAccountKey()), 's-1')).wrappedKey).not.toBe(a.wrappedKey);
    // Read as every client reads a meta's key (older ones and the viewer too): unwrapped under the account key.
    const opened = await unwrapSessionKey(k1, a.wrappedKey, a.keyId, 's-1');
    expect(await raw(opened.key)).toBe(await raw(a.key));
  });
});

describe('a crash before the first batch of a session is sent (Node server)', () => {
  const rig = useServer(startNodeServer, 'sessync-derived-crash-');

  it('a push killed after its first batches are sealed and written down (before any is sent, then after they are stored), then re-run: no key file, no body file, one key per session, each batch stored once', async () => {
    const { a, b, key } = await encryptedPair(rig.root, rig.server);
    const ids = [0, 1, 2].map((n) => plantSession(a, 200 + n, 4));
    const run = await runUntilKilled(a, ['push', '--all'], 'journal-synced:1');
    expect(run.signal, run.err).toBe('SIGKILL');
    expect(pendingLeft(a), 'sealed batches written down, not sent').toBe(true);
    // Nothing but the sealed batches was written down for their keys: the re-run derives them again.
    expect(existsSync(join(a.serverState(), 'session-keys'))).toBe(false);
    expect(await a.ok(['push', '--all', '--json'])).toMatchObject({ failed: 0, pushedSessions: 3 });
    const keys = await deriveKeys(await importAccountKey(key));
    for (const id of ids) expect((await storedMeta(rig.server, id)).sealed?.wrappedKey).toBe((await deriveSessionKey(keys, id)).wrappedKey);
    expect(await b.ok(['pull', '--all', '--json'])).toMatchObject({ failed: 0, createdSessions: 3, pulledEntries: 12 });
    for (const id of ids) expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());

    // Killed once the server has stored the next batches but before their acknowledgements are written down: the
    // re-run seals the same lines again into the same bytes (nonce kept, no body stored), so the server sees retries.
    for (let n = 0; n < 3; n++) plantSession(a, 200 + n, 4, { from: 4 });
    const again = await runUntilKilled(a, ['push', '--all'], 'batch-acknowledged:1');
    expect(again.signal, again.err).toBe('SIGKILL');
    expect(pendingLeft(a)).toBe(true);
    expect(existsSync(join(a.serverState(), 'pending')), 'no sealed body written to disk').toBe(false);
    expect(await a.ok(['push', '--all', '--json'])).toMatchObject({ failed: 0 });
    for (const id of ids) expect(Object.values((await storedMeta(rig.server, id)).hosts), `session ${id}: a batch stored twice`).toEqual([2]);
    expect(await b.ok(['pull', '--all', '--json'])).toMatchObject({ failed: 0, pulledEntries: 12 });
    for (const id of ids) expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());

    // The data key written down in a session's sync state, damaged on disk: AES-KW's check refuses it, the server's
    // meta gives the key, and the push goes on under it.
    const state = (await a.syncState(ids[0]!))!;
    expect(state.dataKey?.wrappedKey).toBe((await deriveSessionKey(keys, ids[0]!)).wrappedKey);
    await a.writeSyncState({ ...state, dataKey: { ...state.dataKey!, wrappedKey: Buffer.alloc(40, 7).toString('base64') } });
    plantSession(a, 200, 4, { from: 8 });
    const damaged = await a.run(['push', '--all']);
    expect(damaged.code, damaged.stderr).toBe(0);
    expect(damaged.stderr).toMatch(/data key in its sync state does not unwrap.*asking the server/);
    expect(await b.ok(['pull', '--all', '--json'])).toMatchObject({ failed: 0, pulledEntries: 4 });
    expect([...entrySet(b.fileOf(ids[0]!)).entries()].sort()).toEqual([...entrySet(a.fileOf(ids[0]!)).entries()].sort());
  }, 60_000);
});

describe('a sealed batch written down but not sent, whose lines then change in the file (Node server)', () => {
  const rig = useServer(startNodeServer, 'sessync-derived-edit-');

  it('is sealed anew from the file as it is now, under a fresh nonce: the other machine opens the edited lines', async () => {
    const { a, b, account } = await encryptedPair(rig.root, rig.server);
    const [id] = [300, 301, 302].map((n) => plantSession(a, n, 4)) as [string, string, string]; // a many-session push: its journal
    const run = await runUntilKilled(a, ['push', '--all'], 'journal-synced:1');
    expect(run.signal, run.err).toBe('SIGKILL');
    expect(pendingLeft(a)).toBe(true);
    // Another writer edits an entry in place (same length) below the pending batch's end.
    const path = a.fileOf(id);
    writeFileSync(path, readFileSync(path, 'utf8').replace('session 300 entry 2 w', 'session 300 entry 2 W'));
    const r = await a.run(['push', '--all']); // notes go to stderr (--json keeps them out)
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('lost its body; re-reading it from the file');
    await b.ok(['pull', '--all', '--json']);
    expect(readFileSync(b.fileOf(id), 'utf8')).toContain('session 300 entry 2 W');
    expect(entrySet(b.fileOf(id))).toEqual(entrySet(a.fileOf(id)));
    // What the server holds: that one batch, sealed from the edited lines.
    expect(await serverBatchKeys(rig.server, account, id)).toHaveLength(1);
  }, 60_000);
});

describe('a session made by an older client (Node server)', () => {
  const rig = useServer(startNodeServer, 'sessync-derived-old-');

  it('a session made by an older client (a random data key) keeps it: a copy pushed from another machine is sealed again under it; a batch under the derived key still opens', async () => {
    const { a, b, key, account } = await encryptedPair(rig.root, rig.server);
    const keys: DerivedKeys = await deriveKeys(await importAccountKey(key));
    const id = await a.newSession();
    await a.say(id, 'older client: first words');
    // An older client wrote down a random key for each session it made before sealing with it; this machine's
    // push takes the written-down key (as after an upgrade), so the server holds what an older client leaves.
    const random = await newSessionKey(keys);
    const keyDir = join(a.home, 'sync', 'servers', serverKey(rig.server.url, account), 'session-keys');
    mkdirSync(keyDir, { recursive: true });
    writeFileSync(join(keyDir, `${id}.json`), JSON.stringify({ keyId: random.keyId, wrappedKey: random.wrappedKey }));
    expect(await a.ok(['push', '--json'])).toMatchObject({ failed: 0 });
    expect((await storedMeta(rig.server, id)).sealed?.wrappedKey).toBe(random.wrappedKey);

    // The same file on b, which derives another key for the id: its first batch is refused and sealed again.
    copySession(a, b, id);
    await b.say(id, 'b: only on b');
    const rb = await b.run(['push']);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stderr).toMatch(/another data key; batch 1 is sealed again/);
    expect((await storedMeta(rig.server, id)).sealed?.wrappedKey).toBe(random.wrappedKey);
    await a.say(id, 'a: only on a');

    // What a server that stores before it compares (or a push racing the older client's) leaves instead: b's batch
    // sealed under the key b derived. Pull opens it with that key (only an account key holder can derive it).
    const derived = await deriveSessionKey(keys, id);
    const store = await serverStore(rig.server);
    const firsts = new Map<string, string>(); // each host's first batch (keys come sorted)
    for (const k of await serverBatchKeys(rig.server, account, id)) {
      const host = k.split('/')[5]!; // a/<account>/s/<session>/b/<host>/<seq>
      if (!firsts.has(host)) firsts.set(host, k);
    }
    let rewritten = 0;
    for (const [host, k] of firsts) {
      const rec = decodeBatchRecord((await store.get(k))!.body);
      if (isDamaged(rec)) throw new Error(rec.damaged);
      const binding = { account, session: id, host, seq: rec.envelope.seq, batchId: rec.envelope.batchId, entryCount: rec.envelope.entryCount };
      const text = await openBatchBytes(random, binding, rec.body);
      if (!text?.includes('b: only on b')) continue;
      const body = await sealBatchBytes(derived, binding, text);
      await store.put(k, encodeBatchRecord({ ...rec, envelope: { ...rec.envelope, sha256: createHash('sha256').update(body).digest('hex') }, body }));
      rewritten++;
    }
    expect(rewritten).toBe(1);

    const c = new Machine(rig.root, 'third', { remote: REMOTE });
    await c.login(rig.server, { encrypt: true });
    await c.ok(['key', 'import', '--json'], key);
    await converged([a, b, c], id);
    const text = JSON.stringify([...entrySet(c.fileOf(id)).values()]);
    for (const t of ['older client: first words', 'b: only on b', 'a: only on a']) expect(text).toContain(t);
  }, 90_000);
});

describe('session keys across a rotation (Node server)', () => {
  const rig = useServer(startNodeServer, 'sessync-derived-rotate-');

  it('after a rotation a new session derives from the new key, an old one keeps its key, and a copy of the old one pushed fresh is sealed under that', async () => {
    const { a, b, key: oldKey } = await encryptedPair(rig.root, rig.server);
    const before = await a.newSession();
    await a.say(before, 'before the rotation');
    await a.ok(['push', '--json']);
    const rotated = (await a.ok(['key', 'rotate', '--json'])) as { key: string };
    const after = await a.newSession();
    await a.say(after, 'after the rotation');
    await a.ok(['push', '--json']);

    const oldKeys = await deriveKeys(await importAccountKey(oldKey));
    const newKeys = await deriveKeys(await importAccountKey(rotated.key));
    const metaAfter = await storedMeta(rig.server, after);
    expect(metaAfter.sealed).toMatchObject({ keyId: newKeys.keyId, wrappedKey: (await deriveSessionKey(newKeys, after)).wrappedKey });
    // The old session's key is the one derived under the old account key, re-wrapped under the new one.
    const metaBefore = await storedMeta(rig.server, before);
    expect(metaBefore.sealed?.keyId).toBe(newKeys.keyId);
    const kept = await unwrapSessionKey(newKeys, metaBefore.sealed!.wrappedKey, newKeys.keyId, before);
    expect(await raw(kept.key)).toBe(await raw((await deriveSessionKey(oldKeys, before)).key));
    expect(metaBefore.sealed!.wrappedKey).not.toBe((await deriveSessionKey(newKeys, before)).wrappedKey);

    // b imports the new key and pushes its own copy of the old session, never synced there: it derives another key
    // than the session holds, so its batch is sealed again under the stored one.
    await b.ok(['key', 'import', '--json'], rotated.key);
    copySession(a, b, before);
    await b.say(before, 'b: a copy, after the rotation');
    const rb = await b.run(['push']);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stderr).toMatch(/another data key; batch 1 is sealed again/);
    await converged([a, b], before);
    await converged([a, b], after);
    expect(JSON.stringify([...entrySet(a.fileOf(before)).values()])).toContain('b: a copy, after the rotation');
  }, 90_000);
});
