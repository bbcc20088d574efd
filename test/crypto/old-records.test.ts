// An encrypted session whose stored batches are partly in an older server's JSON form (base64 ciphertext) and partly
// binary (raw ciphertext): the real client pulls and opens all of them, and a fresh machine gets the same file.
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Machine, entrySet, startNodeServer, useServer } from '../sync/helpers.js';
import { REMOTE, encryptedPair, storedBatchFiles } from './crypto-rig.js';
import { decodeBatchRecord, isDamaged } from '../../worker/session-data.js';

describe('encrypted batches stored in both record forms', () => {
  const rig = useServer(startNodeServer, 'sessync-old-records-');

  it('pulls and opens an old JSON record (base64, its sha-256 of the text) beside binary ones, on a machine that has the session and on a new one', async () => {
    const { a, b, key, account } = await encryptedPair(rig.root, rig.server);
    const id = await a.newSession();
    await a.say(id, 'first, stored by an older server');
    await a.ok(['push', '--json']);
    await a.say(id, 'second, stored binary');
    await a.ok(['push', '--json']);

    const [files] = [...(await storedBatchFiles(rig.server, account, id)).values()] as [string[]];
    // Seq 1 holds the meta and the first entries: rewritten as an older server wrote it.
    expect(files).toHaveLength(2);
    const rec = decodeBatchRecord(readFileSync(files[0]!));
    if (isDamaged(rec)) throw new Error(rec.damaged);
    expect(rec.base64).toBe(false);
    const text = Buffer.from(rec.body).toString('base64');
    writeFileSync(files[0]!, JSON.stringify({ envelope: { ...rec.envelope, sha256: createHash('sha256').update(text).digest('hex') }, body: text }));
    expect(decodeBatchRecord(readFileSync(files[0]!))).toMatchObject({ form: 'json', base64: true });

    await b.ok(['pull', '--json']);
    expect(readFileSync(b.fileOf(id), 'utf8')).toContain('first, stored by an older server');
    expect(entrySet(b.fileOf(id))).toEqual(entrySet(a.fileOf(id)));

    const c = new Machine(rig.root, 'third', { remote: REMOTE });
    await c.login(rig.server, { encrypt: true });
    await c.ok(['key', 'import', '--json'], key);
    await c.ok(['pull', '--json']);
    expect(entrySet(c.fileOf(id))).toEqual(entrySet(a.fileOf(id)));
  }, 120_000);
});
