// A hostile store: a flipped byte, two batches swapped, a batch replayed at another seq are each detected on pull,
// reported with host and seq, and nothing of them is written; a wrong key is refused on import and on sync.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, startNodeServer, useServer, type TestServer } from '../sync/helpers.js';
import { exportAccountKey, newAccountKey } from '../../shared/sync-crypto.js';
import { keyPath } from '../../cli/keys/key-store.js';
import { REMOTE, encryptedPair, plantWrongKey, storedBatchFiles } from './crypto-rig.js';
import { decodeBatchRecord, encodeBatchRecord, isDamaged, type StoredBatchRecord } from '../../worker/session-data.js';

/** The stored batch files of a session's one pushing host, by seq. */
async function batchFiles(server: TestServer, account: string, session: string): Promise<{ host: string; files: string[] }> {
  const hosts = [...(await storedBatchFiles(server, account, session))];
  expect(hosts).toHaveLength(1);
  const [host, files] = hosts[0]!;
  return { host, files };
}

/** A stored batch record (whichever form the server wrote); its raw sealed body is a copy, free to change. */
function read(f: string): StoredBatchRecord {
  const b = decodeBatchRecord(readFileSync(f));
  if (isDamaged(b)) throw new Error(`${f}: ${b.damaged}`);
  expect(b.base64).toBe(false); // a frames push: the ciphertext is stored raw
  return { ...b, body: Buffer.from(b.body) };
}
/** A stored object with its body replaced, and a sha-256 that matches it (what a hostile server would write). */
function withBody(s: StoredBatchRecord, body: Uint8Array): Uint8Array {
  return encodeBatchRecord({ ...s, envelope: { ...s.envelope, sha256: createHash('sha256').update(body).digest('hex') }, body });
}

describe('tampering on the Node server', () => {
  const rig = useServer(startNodeServer, 'sessync-tamper-');

  it('a flipped byte, a swap of two batches and a replay at another seq are refused on pull; the local file stays as it was', async () => {
    const { a, b, account } = await encryptedPair(rig.root, rig.server);
    const id = await a.newSession();
    await a.say(id, 'first');
    await a.ok(['push', '--json']);
    await b.ok(['pull', '--json']);
    const local = b.fileOf(id);
    await a.say(id, 'second');
    await a.ok(['push', '--json']);
    await a.say(id, 'third');
    await a.ok(['push', '--json']);
    const { host, files } = await batchFiles(rig.server, account, id);
    // Seq 1 carries the meta and the first entry; the later entries are in 2 and 3.
    expect(files).toHaveLength(3);
    const [, f2, f3] = files as [string, string, string];
    const orig2 = readFileSync(f2);
    const orig3 = readFileSync(f3);
    const before = readFileSync(local);

    const pullRefused = async (seqs: number[]) => {
      const r = await b.run(['pull', '--json']);
      expect(r.code, r.stderr).toBe(1);
      const out = r.json() as { failed: number; sessions: { session: string; error?: { message: string }; badBatches?: { host: string; seq: number }[] }[] };
      expect(out.failed).toBe(1);
      const s = out.sessions.find((x) => x.session === id)!;
      expect(s.error?.message).toMatch(/fails authentication/);
      for (const seq of seqs) {
        expect(s.error?.message).toContain(`batch ${seq} of host ${host}`);
        expect(s.badBatches).toContainEqual(expect.objectContaining({ host, seq }));
      }
      expect(readFileSync(local).equals(before)).toBe(true);
    };

    // One byte of the ciphertext flipped (the sha-256 fixed up, as a hostile server would).
    const s2 = read(f2);
    const bytes = Buffer.from(s2.body);
    bytes[20]! ^= 0x01;
    writeFileSync(f2, withBody(s2, bytes));
    await pullRefused([2]);
    writeFileSync(f2, orig2);

    // Batches 2 and 3 swapped: each body under the other's envelope.
    const s3 = read(f3);
    writeFileSync(f2, withBody(s2, s3.body));
    writeFileSync(f3, withBody(s3, s2.body));
    await pullRefused([2, 3]);
    writeFileSync(f2, orig2);
    writeFileSync(f3, orig3);

    // Batch 2 replayed at seq 3.
    writeFileSync(f3, withBody(s3, s2.body));
    await pullRefused([3]);
    writeFileSync(f3, orig3);

    // The store made whole again: the same pull now merges both entries (so the refusals above were the tampering).
    expect(await b.ok(['pull', '--json'])).toMatchObject({ pulledEntries: 2, failed: 0 });
    expect(readFileSync(local, 'utf8')).toContain('third');
  }, 120_000);
});

describe('wrong keys on the Node server', () => {
  const rig = useServer(startNodeServer, 'sessync-wrongkey-');

  it('a wrong key is refused on import (nothing saved), and a wrong key on disk is refused on sync before anything is sent or written', async () => {
    const { a, account } = await encryptedPair(rig.root, rig.server, ['owner', 'helper']);
    const id = await a.newSession();
    await a.say(id, 'on the server');
    await a.ok(['push', '--json']);

    const c = new Machine(rig.root, 'newcomer', { remote: REMOTE });
    await c.login(rig.server, { encrypt: true });
    const file = keyPath(c.env, rig.server.url, account);
    // Another account's key, a typo, a truncated string: each refused, with what to do; no key file appears.
    const other = await exportAccountKey(newAccountKey());
    const wrong = await c.run(['key', 'import'], { input: other });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/is not the account's key .*sessync key export/);
    const good = (await a.ok(['key', 'export', '--json'])).key as string;
    const typo = good.slice(0, 30) + (good[30] === 'A' ? 'B' : 'A') + good.slice(31);
    const t = await c.run(['key', 'import'], { input: typo });
    expect(t.code).toBe(2);
    expect(t.stderr).toMatch(/typo|malformed/);
    expect(existsSync(file)).toBe(false);

    // Without a key: push and pull refuse and say how to import.
    const none = await c.run(['pull', '--json']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/does not have its key.*sessync key export.*sessync key import/);

    // A wrong key on disk under the right id: refused by the server's key check; nothing pulled, nothing pushed.
    await plantWrongKey(c, rig.server, account, JSON.parse(readFileSync(keyPath(a.env, rig.server.url, account), 'utf8')).key.split('.')[1]);
    const mine = await c.newSession();
    await c.say(mine, 'must not leave this machine');
    const r = await c.run(['sync', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/fails the server's key check.*sessync key import.*Nothing was synced/);
    expect(c.sessionFiles().filter((f) => f.includes(id))).toEqual([]);
    const heads = await fetch(`${rig.server.url}/v1/changes`, { headers: { authorization: `Bearer ${rig.server.token}` } }).then((x) => x.json() as Promise<{ heads: { session: string }[] }>);
    expect(heads.heads.map((h) => h.session)).not.toContain(mine);

    // The right key (from a file) fixes it.
    const keyFile = join(rig.root, 'key.txt');
    writeFileSync(keyFile, good + '\n');
    expect(await c.ok(['key', 'import', '--file', keyFile, '--json'])).toMatchObject({ keyId: good.split('.')[1] });
    expect(await c.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1, pushedEntries: 1 });
    const status = await c.ok(['key', 'status', '--json']);
    expect(status).toMatchObject({ encrypted: true, matches: true, localKeyId: good.split('.')[1] });
  }, 120_000);
});
