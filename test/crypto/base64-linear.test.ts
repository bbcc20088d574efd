// The sealed meta's base64 check: what the padded-base64 pattern it replaced accepts, in linear time on any length.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBase64 } from '../../shared/wire.js';

const PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

describe('isBase64', () => {
  it('agrees with the padded base64 pattern on edge cases and random short strings', () => {
    for (const s of ['', '=', '==', 'A===', 'AB==', 'ABC=', 'ABCD', 'A=BC', '=ABC', 'AB=C', 'ABCD\n', 'AB C', 'é===', 'AB-_']) {
      expect(isBase64(s), JSON.stringify(s)).toBe(PATTERN.test(s));
    }
    const ch = fc.constantFrom(...'ABZaz09+/=-_ \n.é'.split(''));
    fc.assert(fc.property(fc.array(ch, { maxLength: 16 }).map((a) => a.join('')), (s) => isBase64(s) === PATTERN.test(s)), { numRuns: 5000 });
  });

  it('answers on an 8 MB string, where the pattern overflows the stack', () => {
    const big = 'A'.repeat(8 * 1024 * 1024);
    expect(() => PATTERN.test(big + '!')).toThrow(RangeError);
    expect(isBase64(big)).toBe(true);
    expect(isBase64(big + '!')).toBe(false);
  });
});
