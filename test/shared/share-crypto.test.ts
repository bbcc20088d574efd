// Share encryption: round trip, wrong key, tampering, token and key randomness, base64url.
import { describe, expect, it } from 'vitest';
import { isSessyncError } from '../../shared/errors.js';
import {
  SHARE_ID_RE,
  SHARE_KEY_RE,
  SHARE_TOKEN_RE,
  decryptShare,
  encryptShare,
  fromBase64Url,
  newShareId,
  newShareKey,
  newShareToken,
  toBase64Url,
} from '../../shared/share-crypto.js';
import { buildSharePayload, checkSharePayload, decodeSharePayload, encodeSharePayload } from '../../shared/share-payload.js';

const text = new TextEncoder();

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const e = await p.then(() => null, (err: unknown) => err);
  expect(isSessyncError(e) ? e.code : e).toBe(code);
}

describe('share crypto', () => {
  it('round-trips bytes, compressing repetitive text', async () => {
    const key = newShareKey();
    const plain = text.encode('hello share '.repeat(10_000));
    const ct = await encryptShare(plain, key);
    expect(ct).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(ct.length).toBeLessThan(plain.length / 10);
    expect(await decryptShare(ct, key)).toEqual(plain);
  });

  it('uses a fresh IV each time: the same plaintext never gives the same ciphertext', async () => {
    const key = newShareKey();
    const a = await encryptShare(text.encode('x'), key);
    const b = await encryptShare(text.encode('x'), key);
    expect(a).not.toBe(b);
  });

  it('rejects a wrong key and altered bytes as corrupt, a malformed key as bad input', async () => {
    const key = newShareKey();
    const ct = await encryptShare(text.encode('secret text'), key);
    await expectCode(decryptShare(ct, newShareKey()), 'corrupt');
    const bytes = fromBase64Url(ct);
    bytes[bytes.length - 1]! ^= 1;
    await expectCode(decryptShare(toBase64Url(bytes), key), 'corrupt');
    // The compression flag is authenticated too.
    const flag = fromBase64Url(ct);
    flag[1] = 0;
    await expectCode(decryptShare(toBase64Url(flag), key), 'corrupt');
    await expectCode(decryptShare(ct, 'short'), 'bad_input');
    await expectCode(decryptShare('!!', key), 'corrupt');
  });

  it('base64url round-trips every byte value and odd lengths', () => {
    for (let n = 0; n < 70; n++) {
      const b = new Uint8Array(n).map((_, i) => (i * 37 + n) & 255);
      expect(fromBase64Url(toBase64Url(b))).toEqual(b);
    }
    const all = new Uint8Array(256).map((_, i) => i);
    expect(fromBase64Url(toBase64Url(all))).toEqual(all);
  });

  it('tokens carry 256 random bits: distinct, well-formed, and every bit varies', () => {
    const tokens = Array.from({ length: 2000 }, () => newShareToken());
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const t of tokens) expect(t).toMatch(SHARE_TOKEN_RE);
    expect(fromBase64Url(tokens[0]!).length * 8).toBeGreaterThanOrEqual(128);
    // Each of the 256 bit positions is set in some tokens and clear in others.
    const ones = new Array(256).fill(0);
    for (const t of tokens) fromBase64Url(t).forEach((byte, i) => {
      for (let bit = 0; bit < 8; bit++) if (byte & (1 << bit)) ones[i * 8 + bit]++;
    });
    expect(Math.min(...ones)).toBeGreaterThan(800);
    expect(Math.max(...ones)).toBeLessThan(1200);
  });

  it('ids and keys are well-formed and distinct', () => {
    const ids = Array.from({ length: 1000 }, () => newShareId());
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) expect(id).toMatch(SHARE_ID_RE);
    const keys = Array.from({ length: 100 }, () => newShareKey());
    expect(new Set(keys).size).toBe(100);
    for (const k of keys) expect(k).toMatch(SHARE_KEY_RE);
  });
});

describe('share payload', () => {
  const header = { type: 'session' as const, version: 3, id: 'sess-1', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' };
  const entries = [
    { type: 'message', id: 'a', parentId: null, timestamp: 't1', message: { role: 'user', content: 'hi' } },
    { type: 'message', id: 'b', parentId: 'a', timestamp: 't2', message: { role: 'assistant', content: [] } },
  ];

  it('encodes and decodes, naming the source', () => {
    const p = buildSharePayload(header, entries, '2026-02-02T00:00:00.000Z');
    expect(p.source).toEqual({ session: 'sess-1', entryId: 'b', entryCount: 2 });
    expect(decodeSharePayload(encodeSharePayload(p))).toEqual(p);
  });

  it('refuses entries that are not one branch, and non-payloads', () => {
    const p = buildSharePayload(header, [entries[0]!, { ...entries[1]!, parentId: 'zzz' }]);
    expect(checkSharePayload(p)).toMatch(/does not continue the branch/);
    expect(() => decodeSharePayload(text.encode('{"version":1}'))).toThrow(/not a sessync share payload/);
    expect(() => decodeSharePayload(text.encode('not json'))).toThrow(/not valid JSON/);
  });
});
