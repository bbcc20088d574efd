// appendWhole on a full disk (a 64 KiB tmpfs, root only): what it added is cut off again, but never bytes another
// program (pi appends without sessync's lock) wrote meanwhile.
import { appendFileSync, mkdirSync, readFileSync, rmSync, truncateSync } from 'node:fs';
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
  async function onFullDisk(name: string, fn: (fh: FileHandle, path: string) => Promise<void>, free = 0): Promise<{ before: Buffer; after: Buffer; error: unknown }> {
    const dir = disk.dir;
    mkdirSync(join(dir, name));
    const path = join(dir, name, 'session.jsonl');
    appendFileSync(path, '{"type":"session"}\n');
    const before = readFileSync(path);
    const filler = join(dir, 'filler');
    const full = fill(filler);
    if (free > 0) truncateSync(filler, Math.max(0, full - free)); // room for part of the append, not all of it
    const fh = await open(path, 'a');
    try {
      const error = await fn(fh, path).then(() => null, (e: unknown) => e);
      return { before, after: readFileSync(path), error };
    } finally {
      await fh.close();
      rmSync(filler, { force: true });
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
  it("a write the disk took part of, then another program's append: the rest is not written after it, nothing cut", async () => {
    const pi = '{"type":"message","from":"pi"}\n';
    const r = await onFullDisk('short-then-other', (fh, path) => {
      // The first write(2) is real and comes back short on the full disk; then room is made and the other program
      // appends. Written on, the rest of ours would have landed after its line.
      const racing = new Proxy(fh, {
        get(target, key) {
          if (key === 'write') {
            return async (...a: Parameters<FileHandle['write']>) => {
              const res = await (target.write as (...x: unknown[]) => Promise<{ bytesWritten: number }>)(...a);
              rmSync(join(disk.dir, 'filler')); // space freed meanwhile (another program's cleanup), and pi writes
              appendFileSync(path, pi);
              return res;
            };
          }
          const v = Reflect.get(target, key) as unknown;
          return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
        },
      });
      return appendWhole(racing, path, big);
    }, 8192);
    expect(r.error).toMatchObject({ code: 'fs_full' });
    const text = r.after.toString();
    // Before: the rest of ours went after pi's line (`ours-part | pi | ours-rest`). Now pi's line ends the file.
    expect(text.endsWith(pi), 'the other program\'s line is the last, whole').toBe(true);
    expect(text.indexOf(pi)).toBe(text.length - pi.length);
  });

  it('bytes that stayed hold whole lines (entries now written): the error is not retryable, and counts them', async () => {
    const small = Buffer.from('{"type":"message","n":1}\n{"type":"message","n":2}\n');
    const data = Buffer.concat([small, big]);
    const pi = '{"type":"message","from":"pi"}\n';
    const r = await onFullDisk('whole-lines', (fh, path) => {
      let done = false;
      const racing = new Proxy(fh, {
        get(target, key) {
          if (key === 'sync' && !done) {
            done = true;
            appendFileSync(path, pi);
            return async () => {
              throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO', syscall: 'fsync' });
            };
          }
          const v = Reflect.get(target, key) as unknown;
          return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
        },
      });
      return appendWhole(racing, path, data);
    }, 64 * 1024);
    expect(r.error).toMatchObject({ code: 'fs_io', retryable: false, details: { keptLines: 3 } });
    expect((r.error as SessyncError).message).toMatch(/3 whole lines \(entries now in the file, not to be written again\)/);
  });
});
