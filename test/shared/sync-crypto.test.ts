// Sync encryption: export string round trip and typos, key check, project HMAC, wrap/unwrap, and every tamper of a sealed batch or meta failing authentication.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isSessyncError } from '../../shared/errors.js';
import {
  KEY_ID_RE,
  deriveKeys,
  exportAccountKey,
  fromBase64,
  importAccountKey,
  keyCheck,
  newAccountKey,
  newSessionKey,
  openBatch,
  openMeta,
  rewrapSessionKey,
  sealBatch,
  sealMeta,
  sealProjectKey,
  toBase64,
  unwrapSessionKey,
  type BatchBinding,
} from '../../shared/sync-crypto.js';
import { NAME_RE } from '../../shared/wire.js';

const binding: BatchBinding = { account: 'acct1', session: 's1', host: 'h1', seq: 3, batchId: 'b-1', entryCount: 2 };
const body = '{"type":"message","id":"a"}\n{"type":"message","id":"b"}\n';

async function rejects(p: Promise<unknown>, code: string, pattern?: RegExp): Promise<void> {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(isSessyncError(e, code as never), String(e)).toBe(true);
  if (pattern) expect((e as Error).message).toMatch(pattern);
}

describe('account key export string', () => {
  it('round trips, ignores whitespace from a wrapped line, and its id is a valid name', async () => {
    const k = newAccountKey();
    expect(k.keyId).toMatch(KEY_ID_RE);
    expect(k.keyId).toMatch(NAME_RE);
    const s = await exportAccountKey(k);
    expect(s.startsWith('sessync-key-1.')).toBe(true);
    const back = await importAccountKey(`  ${s.slice(0, 20)}\n${s.slice(20)}\n`);
    expect(back.keyId).toBe(k.keyId);
    expect([...back.raw]).toEqual([...k.raw]);
  });

  it('any one changed character is caught at import (checksum), never imported as another key', async () => {
    const s = await exportAccountKey(newAccountKey());
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.';
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: s.length - 1 }), fc.constantFrom(...alphabet), async (i, c) => {
        fc.pre(s[i] !== c);
        const typo = s.slice(0, i) + c + s.slice(i + 1);
        const e = await importAccountKey(typo).then(() => null, (x: unknown) => x);
        expect(isSessyncError(e, 'bad_input') || isSessyncError(e, 'unsupported_version')).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('a changed last key character that differs only in its unused bits is refused, not read as the same key', async () => {
    const k = newAccountKey();
    const s = await exportAccountKey(k);
    const [prefix, keyId, keyText, sum] = s.split('.');
    // 32 bytes are 43 base64url characters: the last one carries 2 bits of the key and 4 unused bits.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(keyText!.at(-1)!);
    const sibling = alphabet[(last & 0b110000) | ((last + 1) & 0b001111)]!;
    const typo = [prefix, keyId, keyText!.slice(0, -1) + sibling, sum].join('.');
    const e = await importAccountKey(typo).then(() => null, (x: unknown) => x);
    expect(isSessyncError(e, 'bad_input')).toBe(true);
  });

  it('a truncated string, another text, and a newer format each get their own message', async () => {
    const s = await exportAccountKey(newAccountKey());
    await rejects(importAccountKey(s.slice(0, -3)), 'bad_input', /truncated|typo/);
    await rejects(importAccountKey('hello'), 'bad_input', /not a sessync key/);
    await rejects(importAccountKey(s.replace('sessync-key-1', 'sessync-key-2')), 'unsupported_version', /newer sessync/);
  });
});

describe('derived keys', () => {
  it('the key check is deterministic per key and differs between keys', async () => {
    const k = newAccountKey();
    const a = await keyCheck(await deriveKeys(k));
    expect(await keyCheck(await deriveKeys({ ...k, raw: new Uint8Array(k.raw) }))).toBe(a);
    expect(await keyCheck(await deriveKeys(newAccountKey()))).not.toBe(a);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('the project key is a 64-hex HMAC: same for one account, different for another, and not the plaintext', async () => {
    const k = await deriveKeys(newAccountKey());
    const p = await sealProjectKey(k, 'github.com/Acme/App');
    expect(p).toMatch(/^[0-9a-f]{64}$/);
    expect(await sealProjectKey(k, 'github.com/Acme/App')).toBe(p);
    expect(await sealProjectKey(k, 'github.com/Acme/Other')).not.toBe(p);
    expect(await sealProjectKey(await deriveKeys(newAccountKey()), 'github.com/Acme/App')).not.toBe(p);
  });
});

describe('session keys', () => {
  it('wrap and unwrap; another account key or an altered wrap is refused', async () => {
    const k = await deriveKeys(newAccountKey());
    const sk = await newSessionKey(k);
    const sealed = await sealBatch(sk, binding, body);
    const back = await unwrapSessionKey(k, sk.wrappedKey, sk.keyId, 's1');
    expect(await openBatch(back, binding, sealed)).toBe(body);
    const other = await deriveKeys({ ...newAccountKey(), keyId: k.keyId });
    await rejects(unwrapSessionKey(other, sk.wrappedKey, sk.keyId, 's1'), 'corrupt', /does not unwrap/);
    await rejects(unwrapSessionKey(await deriveKeys(newAccountKey()), sk.wrappedKey, sk.keyId, 's1'), 'forbidden', /sessync key import/);
    const bytes = fromBase64(sk.wrappedKey);
    bytes[5]! ^= 1;
    await rejects(unwrapSessionKey(k, toBase64(bytes), sk.keyId, 's1'), 'corrupt');
  });

  it('a rotation re-wraps the same data key: old batches open with the key unwrapped under the new account key', async () => {
    const oldK = await deriveKeys(newAccountKey());
    const newK = await deriveKeys(newAccountKey());
    const sk = await newSessionKey(oldK);
    const sealed = await sealBatch(sk, binding, body);
    const re = await rewrapSessionKey(sk, newK);
    expect(re.keyId).toBe(newK.keyId);
    const back = await unwrapSessionKey(newK, re.wrappedKey, re.keyId, 's1');
    expect(await openBatch(back, binding, sealed)).toBe(body);
  });
});

describe('sealed batches', () => {
  it('round trip any text, with a fresh nonce each time', async () => {
    const sk = await newSessionKey(await deriveKeys(newAccountKey()));
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 300 }), async (text) => {
        const a = await sealBatch(sk, binding, text);
        expect(await openBatch(sk, binding, a)).toBe(text);
        expect(await sealBatch(sk, binding, text)).not.toBe(a);
        expect(a).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
      }),
      { numRuns: 50 },
    );
  });

  it('every flipped byte fails authentication', async () => {
    const sk = await newSessionKey(await deriveKeys(newAccountKey()));
    const sealed = await sealBatch(sk, binding, body);
    const bytes = fromBase64(sealed);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), async (i, x) => {
        const t = new Uint8Array(bytes);
        t[i]! ^= x;
        expect(await openBatch(sk, binding, toBase64(t))).toBeNull();
      }),
      { numRuns: 100 },
    );
    expect(await openBatch(sk, binding, toBase64(bytes.subarray(0, 20)))).toBeNull();
  });

  it('another account, session, host, seq, batch id or entry count fails authentication (no splice, no replay)', async () => {
    const sk = await newSessionKey(await deriveKeys(newAccountKey()));
    const sealed = await sealBatch(sk, binding, body);
    const others: BatchBinding[] = [
      { ...binding, account: 'acct2' },
      { ...binding, session: 's2' },
      { ...binding, host: 'h2' },
      { ...binding, seq: 4 },
      { ...binding, batchId: 'b-2' },
      { ...binding, entryCount: 3 },
      // Fields that run together must not collide: "h1\n3" vs "h\n13".
      { ...binding, host: 'h', seq: 13 },
    ];
    for (const o of others) expect(await openBatch(sk, o, sealed), JSON.stringify(o)).toBeNull();
    const otherKey = await newSessionKey(await deriveKeys(newAccountKey()));
    expect(await openBatch(otherKey, binding, sealed)).toBeNull();
  });

  it('a body that is not base64 is corrupt, not a crash', async () => {
    const sk = await newSessionKey(await deriveKeys(newAccountKey()));
    await rejects(openBatch(sk, binding, 'not base64!'), 'corrupt', /batch 3 of host h1/);
  });
});

describe('sealed meta', () => {
  it('round trips header, name and agent; another session or account or key fails', async () => {
    const k = await deriveKeys(newAccountKey());
    const sk = await newSessionKey(k);
    const meta = { header: { type: 'session', id: 's1', cwd: '/home/me/src/app', version: 3 }, name: 'secret plan', agent: 'pi' };
    const sealed = await sealMeta(sk, 'acct1', 's1', meta);
    expect(sealed).not.toContain('secret');
    expect(await openMeta(sk, 'acct1', 's1', sealed)).toEqual(meta);
    await rejects(openMeta(sk, 'acct1', 's2', sealed), 'corrupt', /fails authentication/);
    await rejects(openMeta(sk, 'acct2', 's1', sealed), 'corrupt');
    await rejects(openMeta(await newSessionKey(k), 'acct1', 's1', sealed), 'corrupt');
  });
});
