// encodeSegment's shortcut for plain segments gives the name its character-by-character encoding gives, for any segment.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSegment } from '../../worker/store/fs-names.js';

const utf8 = new TextEncoder();

/** The encoding spelled out one character at a time, as encodeSegment's documentation states it (the reference). */
function byCharacter(seg: string): string {
  let out = '';
  const upper: number[] = [];
  for (const ch of seg) {
    if (/^[a-z0-9_-]$/.test(ch) || (ch === '.' && out !== '')) out += ch;
    else if (/^[A-Z]$/.test(ch)) {
      upper.push(out.length);
      out += ch.toLowerCase();
    } else for (const b of utf8.encode(ch)) out += '%' + b.toString(16).padStart(2, '0');
  }
  if (upper.length === 0) return out;
  const mask = new Uint8Array(Math.ceil(out.length / 4));
  for (const i of upper) mask[i >> 2]! |= 1 << (i & 3);
  return out + '@' + Array.from(mask, (n) => n.toString(16)).join('');
}

describe('encodeSegment', () => {
  it('encodes plain segments and joined tails (with /) exactly as character by character', () => {
    const chars = fc.constantFrom('a', 'z', '0', '9', '_', '-', '.', '/', 'A', 'é', ' ', '%', '~');
    fc.assert(
      fc.property(fc.array(chars, { minLength: 1, maxLength: 40 }), (cs) => {
        const seg = cs.join('');
        expect(encodeSegment(seg)).toBe(byCharacter(seg));
      }),
      { numRuns: 2000 },
    );
    for (const seg of ['686fc77a-b718-4182-9f22-070dc54ab397/000000000001', 'acct-d2225976d498a847ab383359', '.x', 'a/.b', '/a', 'a/', '-', '_']) {
      expect(encodeSegment(seg), seg).toBe(byCharacter(seg));
    }
  });
});
