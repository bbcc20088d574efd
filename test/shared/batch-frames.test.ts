// The frames codec: a round trip property, bodies as views (no copy), and a table of every malformed body it refuses.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { concatChunks, decodeFrameChunks, decodeFrames, encodeFrames, FRAMES_MAGIC, FRAMES_TYPE, hasFramesMagic, MAX_FRAME_HEADER_BYTES, type Frame } from '../../shared/batch-frames.js';
import { isSessyncError } from '../../shared/errors.js';

const enc = new TextEncoder();
const OPTS = { maxFrames: 16, maxBodyBytes: 1024 };

/** A frames body from text pieces and raw byte pieces, to spell malformed bodies exactly. */
function body(...parts: (string | Uint8Array)[]): Uint8Array {
  return concatChunks(parts.map((p) => (typeof p === 'string' ? enc.encode(p) : p)));
}

function refusal(bytes: Uint8Array, opts: Parameters<typeof decodeFrames>[1] = OPTS): string {
  try {
    decodeFrames(bytes, opts);
  } catch (e) {
    if (!isSessyncError(e, 'bad_input')) throw e;
    return e.message;
  }
  throw new Error('decodeFrames accepted a malformed body');
}

describe('batch frames codec', () => {
  it('names its media type and magic line', () => {
    expect(FRAMES_TYPE).toBe('application/vnd.sessync.frames');
    expect(FRAMES_MAGIC).toBe('sessync-frames 1\n');
  });

  it('round-trips any headers and bodies (bytes set by the encoder, other fields passed through)', () => {
    const frameArb = fc.record({
      header: fc.dictionary(fc.string().filter((k) => k !== 'bytes' && k !== '__proto__'), fc.jsonValue().filter((v) => !JSON.stringify(v).includes('"__proto__"')), { maxKeys: 5 }),
      body: fc.uint8Array({ maxLength: 300 }),
    });
    fc.assert(
      fc.property(fc.array(frameArb, { maxLength: 8 }), (frames: Frame[]) => {
        const decoded = decodeFrames(concatChunks(encodeFrames(frames)), OPTS);
        expect(decoded.length).toBe(frames.length);
        decoded.forEach((d, i) => {
          // JSON drops -0's sign and undefined; compare what JSON carries.
          expect(d.header).toEqual(JSON.parse(JSON.stringify({ ...frames[i]!.header, bytes: frames[i]!.body.byteLength })));
          expect(Buffer.from(d.body).equals(Buffer.from(frames[i]!.body))).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('carries JSONL and ciphertext bytes raw, never escaped, and decodes bodies as views into the buffer', () => {
    const jsonl = enc.encode('{"type":"message","text":"a \\"quoted\\" line\\n"}\n{"type":"x"}\n');
    const sealed = new Uint8Array([0, 10, 255, 13, 10, 0x22, 0x5c]);
    const chunks = encodeFrames([{ header: { envelope: { seq: 1 } }, body: jsonl }, { header: { seq: 2 }, body: sealed }]);
    // The bodies are the caller's own arrays in the chunk list: nothing was copied or escaped.
    expect(chunks).toContain(jsonl);
    expect(chunks).toContain(sealed);
    const all = concatChunks(chunks);
    expect(all.byteLength).toBe(FRAMES_MAGIC.length + `{"envelope":{"seq":1},"bytes":${jsonl.byteLength}}\n`.length + jsonl.byteLength + `{"seq":2,"bytes":7}\n`.length + 7);
    const [a, b] = decodeFrames(all, OPTS);
    expect(a!.body.buffer).toBe(all.buffer);
    expect(new TextDecoder().decode(a!.body)).toBe(new TextDecoder().decode(jsonl));
    expect([...b!.body]).toEqual([...sealed]);
    expect(b!.header).toEqual({ seq: 2, bytes: 7 });
  });

  it('takes an empty body, zero frames, and a header-only frame', () => {
    expect(decodeFrames(enc.encode(FRAMES_MAGIC), OPTS)).toEqual([]);
    const [f] = decodeFrames(body(FRAMES_MAGIC, '{"cursor":{},"bytes":0}\n'), OPTS);
    expect(f!.header).toEqual({ cursor: {}, bytes: 0 });
    expect(f!.body.byteLength).toBe(0);
  });

  it('encodeFrames replaces a bytes the caller set and refuses a header longer than the limit', () => {
    const [f] = decodeFrames(concatChunks(encodeFrames([{ header: { bytes: 99 }, body: new Uint8Array(3) }])), OPTS);
    expect(f!.header.bytes).toBe(3);
    expect(() => encodeFrames([{ header: { x: 'y'.repeat(MAX_FRAME_HEADER_BYTES) }, body: new Uint8Array() }])).toThrow(/header is \d+ bytes/);
  });

  it('hasFramesMagic tells a frames body from JSON', () => {
    expect(hasFramesMagic(enc.encode(FRAMES_MAGIC))).toBe(true);
    expect(hasFramesMagic(enc.encode('{"envelope":{}}'))).toBe(false);
    expect(hasFramesMagic(enc.encode('sessync-frames'))).toBe(false);
  });

  const deep = '{"a":'.repeat(70) + '1' + '}'.repeat(70);
  const cases: { name: string; bytes: Uint8Array; opts?: Parameters<typeof decodeFrames>[1]; message: RegExp }[] = [
    { name: 'no magic line (a JSON body)', bytes: body('{"batches":[]}'), message: /does not start with the line "sessync-frames 1"/ },
    { name: 'another version', bytes: body('sessync-frames 2\n{"bytes":0}\n'), message: /does not start with/ },
    { name: 'empty body', bytes: new Uint8Array(), message: /does not start with/ },
    { name: 'magic without its newline', bytes: body('sessync-frames 1'), message: /does not start with/ },
    { name: 'header cut off before its newline', bytes: body(FRAMES_MAGIC, '{"bytes":3'), message: /frame 0 \(byte 17\): the header line has no newline/ },
    { name: 'header longer than the limit', bytes: body(FRAMES_MAGIC, `{"x":"${'y'.repeat(200)}","bytes":0}\n`), opts: { ...OPTS, maxHeaderBytes: 100 }, message: /frame 0 \(byte 17\): the header line is longer than 100 bytes/ },
    { name: 'header not JSON', bytes: body(FRAMES_MAGIC, '{bytes: 0}\n'), message: /frame 0 \(byte 17\): the header is not valid JSON/ },
    { name: 'header not an object (array)', bytes: body(FRAMES_MAGIC, '[0]\n'), message: /frame 0 \(byte 17\): the header is not a JSON object/ },
    { name: 'header not an object (number)', bytes: body(FRAMES_MAGIC, '5\n'), message: /not a JSON object/ },
    { name: 'header null', bytes: body(FRAMES_MAGIC, 'null\n'), message: /not a JSON object/ },
    { name: 'header not UTF-8', bytes: body(FRAMES_MAGIC, new Uint8Array([0x7b, 0xff, 0x7d, 0x0a])), message: /frame 0 \(byte 17\): the header is not valid UTF-8/ },
    { name: 'header nests too deep', bytes: body(FRAMES_MAGIC, `{"bytes":0,"m":${deep}}\n`), message: /nests JSON deeper than 66 levels/ },
    { name: 'header spells __proto__', bytes: body(FRAMES_MAGIC, '{"bytes":0,"__proto__":{"x":1}}\n'), message: /"__proto__" is not allowed/ },
    { name: 'header escapes __proto__', bytes: body(FRAMES_MAGIC, '{"bytes":0,"\\u005f_proto__":{"x":1}}\n'), message: /"__proto__" is not allowed/ },
    { name: 'bytes missing', bytes: body(FRAMES_MAGIC, '{"envelope":{}}\n'), message: /"bytes" must be an integer >= 0, got nothing/ },
    { name: 'bytes negative', bytes: body(FRAMES_MAGIC, '{"bytes":-1}\n'), message: /"bytes" must be an integer >= 0, got -1/ },
    { name: 'bytes fractional', bytes: body(FRAMES_MAGIC, '{"bytes":1.5}\nab'), message: /got 1.5/ },
    { name: 'bytes a string', bytes: body(FRAMES_MAGIC, '{"bytes":"2"}\nab'), message: /got "2"/ },
    { name: 'bytes beyond safe integers', bytes: body(FRAMES_MAGIC, '{"bytes":1e300}\n'), message: /must be an integer/ },
    { name: 'bytes over the body limit', bytes: body(FRAMES_MAGIC, '{"bytes":1025}\n', new Uint8Array(1025)), message: /frame 0 \(byte 17\): "bytes" is 1025, a body may have at most 1024/ },
    { name: 'body cut short (lying bytes)', bytes: body(FRAMES_MAGIC, '{"bytes":10}\nabc'), message: /frame 0 \(byte 17\): the header says 10 body bytes, only 3 follow/ },
    { name: 'second frame cut short', bytes: body(FRAMES_MAGIC, '{"bytes":1}\na{"bytes":5}\nab'), message: /frame 1 \(byte 30\): the header says 5 body bytes, only 2 follow/ },
    { name: 'bytes too small: the rest is read as a header', bytes: body(FRAMES_MAGIC, '{"bytes":1}\nabc'), message: /frame 1 \(byte 30\): the header line has no newline/ },
    { name: 'trailing garbage after the last frame', bytes: body(FRAMES_MAGIC, '{"bytes":2}\nab', 'garbage\n'), message: /frame 1 \(byte 31\): the header is not valid JSON/ },
    { name: 'a lone newline after the last frame', bytes: body(FRAMES_MAGIC, '{"bytes":0}\n', '\n'), message: /frame 1 .*not valid JSON/ },
    { name: 'more frames than allowed', bytes: body(FRAMES_MAGIC, '{"bytes":0}\n{"bytes":0}\n{"bytes":0}\n'), opts: { ...OPTS, maxFrames: 2 }, message: /more than 2 frames in one body/ },
  ];
  for (const c of cases) {
    it(`refuses: ${c.name}`, () => {
      const message = refusal(c.bytes, c.opts);
      expect(message).toMatch(/^frames: /);
      expect(message).toMatch(c.message);
    });
  }

  /** `bytes` cut at `cuts` (any offsets, repeats give empty chunks), as a body arrives from the network. */
  const split = (bytes: Uint8Array, cuts: number[]): Uint8Array[] => {
    const at = [0, ...cuts.map((c) => c % (bytes.byteLength + 1)).sort((a, b) => a - b), bytes.byteLength];
    return at.slice(1).map((end, i) => bytes.subarray(at[i]!, end));
  };
  const outcome = (f: () => { header: unknown; body: Uint8Array }[]): unknown => {
    try {
      return f().map((x) => ({ header: x.header, body: [...x.body] }));
    } catch (e) {
      return (e as Error).message;
    }
  };

  it('decodeFrameChunks: any split of a body into chunks decodes as the whole body does, refusals included', () => {
    for (const c of cases) {
      for (let cut = 0; cut <= c.bytes.byteLength; cut++) {
        const chunks = split(c.bytes, [cut, cut + 1]);
        expect(outcome(() => decodeFrameChunks(chunks, c.opts ?? OPTS).map((f) => ({ header: f.header, body: concatChunks(f.parts) })))).toBe(refusal(c.bytes, c.opts));
      }
    }
    const frameArb = fc.record({ header: fc.dictionary(fc.constantFrom('a', 'b', 'seq'), fc.jsonValue(), { maxKeys: 3 }), body: fc.uint8Array({ maxLength: 200 }) });
    fc.assert(
      fc.property(fc.array(frameArb, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 12 }), (frames: Frame[], cuts) => {
        const all = concatChunks(encodeFrames(frames));
        const chunks = split(all, cuts);
        const chunked = decodeFrameChunks(chunks, OPTS);
        expect(outcome(() => chunked.map((f) => ({ header: f.header, body: concatChunks(f.parts) })))).toEqual(outcome(() => decodeFrames(all, OPTS)));
        // Bodies are views into the chunks as received, never copies.
        for (const f of chunked) for (const part of f.parts) expect(part.byteLength === 0 || chunks.some((ch) => ch.buffer === part.buffer)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a header without a newline after at most maxHeaderBytes, not at the end of a large body', () => {
    const big = body(FRAMES_MAGIC, new Uint8Array(2 * 1024 * 1024).fill(0x61));
    expect(refusal(big)).toMatch(/longer than 65536 bytes/);
  });
});
