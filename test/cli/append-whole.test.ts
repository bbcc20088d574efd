// appendWhole on a full disk (a 64 KiB tmpfs, root only): what it added is cut off again, but never bytes another
// program (pi appends without sessync's lock) wrote meanwhile.
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendWhole } from '../../cli/store/append-whole.js';
import { SessyncError } from '../../shared/errors.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`append-whole: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('appendWhole when the disk fills up mid-write', () => {
  const disk = useTmpfs('64k');

  /** A file of one line in its own folder, the disk then filled, and `fn` run on it opened for appending. */
  async function onFullDisk(name: string, fn: (fh: FileHandle, path: string) => Promise<void>): Promise<{ before: Buffer; after: Buffer; error: unknown }> {
    const dir = disk.dir;
    mkdirSync(join(dir, name));
    const path = join(dir, name, 'session.jsonl');
    appendFileSync(path, '{"type":"session"}\n');
    const before = readFileSync(path);
    const filler = join(dir, 'filler');
    fill(filler);
    const fh = await open(path, 'a');
    try {
      const error = await fn(fh, path).then(() => null, (e: unknown) => e);
      return { before, after: readFileSync(path), error };
    } finally {
      await fh.close();
      rmSync(filler);
    }
  }

  const big = Buffer.from(JSON.stringify({ type: 'message', text: 'x'.repeat(20_000) }) + '\n');

  it('cut back to the old bytes: fs_full naming the file', async () => {
    const r = await onFullDisk('alone', (fh, path) => appendWhole(fh, path, big));
    expect(r.error).toBeInstanceOf(SessyncError);
    expect(r.error).toMatchObject({ code: 'fs_full', retryable: true, details: { errno: 'ENOSPC', syscall: 'write' } });
    expect(r.after.equals(r.before)).toBe(true);
  });

  it("another program's append that came between: nothing cut, its bytes kept, the error says ours stayed", async () => {
    const pi = '{"type":"message","from":"pi"}\n';
    const r = await onFullDisk('shared', (fh, path) => {
      // The other program's append lands just before this call's first write: a handle that does it then (the file,
      // the disk and the writes are real; only the moment is chosen).
      let done = false;
      const racing = new Proxy(fh, {
        get(target, key) {
          if (key === 'write' && !done) {
            done = true;
            appendFileSync(path, pi);
          }
          const v = Reflect.get(target, key) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      return appendWhole(racing, path, big);
    });
    expect(r.error).toMatchObject({ code: 'fs_full', retryable: true });
    expect((r.error as SessyncError).message).toMatch(/bytes of this append stayed at the end of .*another program wrote to it meanwhile/);
    expect(r.after.subarray(0, r.before.length + pi.length).toString()).toBe(r.before.toString() + pi);
    expect(r.after.length).toBeGreaterThan(r.before.length + pi.length);
  });
});
