// The ciphertext body check accepts exactly what the base64 pattern it replaced accepts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isBase64Bytes } from '../../worker/batch-validate.js';

const PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;
const enc = new TextEncoder();

describe('isBase64Bytes', () => {
  it('agrees with /^[A-Za-z0-9+/]+={0,2}$/ on edge cases and on random strings over base64 and nearby characters', () => {
    for (const s of ['', '=', '==', 'A', 'AB=', 'AB==', 'AB===', 'A=B', '=AB', 'AB\n', 'A B', 'é', 'Zm9v', '+/+/', 'AB-_']) {
      expect(isBase64Bytes(enc.encode(s)), JSON.stringify(s)).toBe(PATTERN.test(s));
    }
    const ch = fc.constantFrom(...'ABZaz09+/=-_ \n.é'.split(''));
    fc.assert(fc.property(fc.array(ch, { maxLength: 12 }).map((a) => a.join('')), (s) => isBase64Bytes(enc.encode(s)) === PATTERN.test(s)), { numRuns: 5000 });
  });
});
