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
      // The other program's append lands just before this call's first write, and the disk fills up (to 8 KiB free)
      // after the room check: a handle that does both then (the file, the disk and the writes are real; only the
      // moment is chosen).
      let done = false;
      const other = join(disk.dir, 'other');
      const racing = new Proxy(fh, {
        get(target, key) {
          if (key === 'write' && !done) {
            done = true;
            appendFileSync(path, pi);
            truncateSync(other, Math.max(0, fill(other) - 8192));
          }
          const v = Reflect.get(target, key) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      return appendWhole(racing, path, big).finally(() => rmSync(other, { force: true }));
    }, 64 * 1024);
    expect(r.error).toMatchObject({ code: 'fs_full', retryable: true });
    expect((r.error as SessyncError).message).toMatch(/bytes of this append stayed at the end of .*another program wrote to it meanwhile/);
    expect(r.after.subarray(0, r.before.length + pi.length).toString()).toBe(r.before.toString() + pi);
    expect(r.after.length).toBeGreaterThan(r.before.length + pi.length);
  });

  it('an append the disk has no room for by its own count is refused before any byte is written', async () => {
    const r = await onFullDisk('no-room', (fh, path) => appendWhole(fh, path, big), 8192);
    expect(r.error).toMatchObject({ code: 'fs_full', retryable: true, details: { errno: 'ENOSPC' } });
    expect(r.after.equals(r.before)).toBe(true);
  });

  it("a write the disk took part of (filled between the check and the write), then another program's append: the rest is not written after it", async () => {
    const pi = '{"type":"message","from":"pi"}\n';
    const r = await onFullDisk('short-then-other', (fh, path) => {
      // Room by statfs when asked; then another program fills the disk to 8 KiB free, the real write(2) comes back
      // short, room is made again and pi appends. Written on, the rest of ours would have landed after pi's line.
      const racing = new Proxy(fh, {
        get(target, key) {
          if (key === 'write') {
            return async (...a: Parameters<FileHandle['write']>) => {
              const other = join(disk.dir, 'other');
              truncateSync(other, Math.max(0, fill(other) - 8192));
              const res = await (target.write as (...x: unknown[]) => Promise<{ bytesWritten: number }>)(...a);
              rmSync(other);
              appendFileSync(path, pi);
              return res;
            };
          }
          const v = Reflect.get(target, key) as unknown;
          return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
        },
      });
      return appendWhole(racing, path, big);
    }, 64 * 1024);
    expect(r.error).toMatchObject({ code: 'fs_full' });
    const text = r.after.toString();
    expect(text.endsWith(pi), "the other program's bytes are the last, not followed by the rest of ours").toBe(true);
    // What is true of that line: it is joined to our piece, and the error says so.
    const last = text.slice(r.before.length).split('\n').filter((l) => l !== '');
    expect(last).toHaveLength(1);
    expect(last[0]!.endsWith(pi.trim()) && last[0] !== pi.trim()).toBe(true);
    expect((r.error as SessyncError).message).toMatch(/a torn line \(a line another program wrote right after it is joined to it and reads as damaged/);
  });

  /** appendWhole of `data` with an fsync that fails with `code` after another program appended (nothing cut). */
  function failedSync(name: string, data: Buffer, code: string) {
    const pi = '{"type":"message","from":"pi"}\n';
    return onFullDisk(name, (fh, path) => {
      let done = false;
      const racing = new Proxy(fh, {
        get(target, key) {
          if (key === 'sync' && !done) {
            done = true;
            appendFileSync(path, pi);
            return async () => {
              throw Object.assign(new Error(`${code}: injected, fsync`), { code, syscall: 'fsync' });
            };
          }
          const v = Reflect.get(target, key) as unknown;
          return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
        },
      });
      return appendWhole(racing, path, data);
    }, 64 * 1024);
  }

  it('bytes that stayed hold whole lines (entries now written): not retryable though the cause is (ENOSPC), and counted', async () => {
    // A leading newline (ending a torn line before the append) is not an entry: two entries, two whole lines.
    const data = Buffer.from('\n{"type":"message","n":1}\n{"type":"message","n":2}\n');
    const r = await failedSync('whole-lines', data, 'ENOSPC');
    expect(r.error).toMatchObject({ code: 'fs_full', retryable: false, details: { keptLines: 2 } });
    expect((r.error as SessyncError).message).toMatch(/: 2 whole lines \(entries now in the file, not to be written again\)$/);
  });

  it('bytes that stayed hold no whole line: still retryable, and no entry claimed', async () => {
    const r = await failedSync('no-whole-line', Buffer.from('\n{"type":"message","n":1'), 'ENOSPC');
    expect(r.error).toMatchObject({ code: 'fs_full', retryable: true, details: { keptLines: 0 } });
    expect((r.error as SessyncError).message).not.toMatch(/whole line/);
  });
});
