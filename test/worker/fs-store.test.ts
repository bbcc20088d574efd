// The BlobStore conformance suite on the file-system store, plus what only a file system can get wrong:
// racing processes, keys that try to leave the root, case-insensitive names, crash leftovers.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { isSessyncError } from '../../shared/errors.js';
import { FsStore, decodeEntryName, encodeSegment } from '../../worker/store/fs-store.js';
import { compareKeys } from '../../worker/store/key-order.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { describeBlobStore } from './blob-store.case.js';

describeBlobStore('file system', async () => {
  const t = tempDir('sessync-fs-store-');
  return { store: new FsStore(t.dir), cleanup: async () => t.cleanup() };
});

// The layout of stores written before the layout marker, which keep theirs: one folder per key segment.
describeBlobStore('file system, nested layout', async () => {
  const t = tempDir('sessync-fs-store-nested-');
  writeFileSync(join(t.dir, '.layout'), '{"layout":"nested"}\n');
  return { store: new FsStore(t.dir), cleanup: async () => t.cleanup() };
});

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('FsStore, file-system specifics', () => {
  const t = tempDir('sessync-fs-store-x-');
  afterAll(() => t.cleanup());

  it('racing put-if-absent from separate node processes leaves exactly one winner per key (empty bodies too: made at their own names)', async () => {
    const PROCS = 6;
    const KEYS = 30;
    // Bundle a tiny racer around the real store so each child is a plain `node` process.
    const racer = join(t.dir, 'racer.mjs');
    await build({
      stdin: {
        contents: `
          import { FsStore } from ${JSON.stringify(join(REPO_ROOT, 'worker/store/fs-store.ts'))};
          const [root, id, n] = process.argv.slice(2);
          const store = new FsStore(root);
          process.stdout.write('ready\\n');
          // The parent sends a start time a moment ahead, so every process begins at the same instant.
          process.stdin.once('data', (d) => setTimeout(async () => {
            const won = [];
            for (let i = 0; i < Number(n); i++) {
              if (await store.putIfAbsent('a/acct/s/sess/b/host/' + String(i).padStart(12, '0'), i % 3 === 2 ? new Uint8Array(0) : new TextEncoder().encode('proc ' + id))) won.push(i);
            }
            process.stdout.write(JSON.stringify(won) + '\\n');
            process.exit(0);
          }, Number(String(d)) - Date.now()));`,
        resolveDir: REPO_ROOT,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: racer,
      logLevel: 'silent',
    });

    const race = async (root: string): Promise<number[][]> => {
      const children = Array.from({ length: PROCS }, (_, id) => {
        const child = spawn(process.execPath, [racer, root, String(id), String(KEYS)], { stdio: ['pipe', 'pipe', 'inherit'] });
        let out = '';
        const ready = new Promise<void>((resolve) => child.stdout.on('data', (d) => { out += d; if (out.includes('ready\n')) resolve(); }));
        const done = new Promise<number[]>((resolve, reject) => {
          child.on('error', reject);
          child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.split('\n')[1]!)) : reject(new Error(`racer ${id} exited ${code}: ${out}`))));
        });
        return { child, ready, done };
      });
      await Promise.all(children.map((c) => c.ready));
      const goAt = Date.now() + 300;
      for (const c of children) c.child.stdin.write(`${goAt}\n`);
      return Promise.all(children.map((c) => c.done));
    };

    // On a loaded machine one process can finish before the others start; then the round proved
    // nothing about racing and runs again (the per-key check below holds in every round).
    let contested = false;
    for (let round = 0; round < 4 && !contested; round++) {
      const root = join(t.dir, `race-${round}`);
      const wins = await race(root);
      const store = new FsStore(root);
      for (let i = 0; i < KEYS; i++) {
        const winners = wins.flatMap((w, id) => (w.includes(i) ? [id] : []));
        expect(winners, `round ${round}, key ${i}`).toHaveLength(1);
        const got = await store.get('a/acct/s/sess/b/host/' + String(i).padStart(12, '0'));
        expect(got && dec.decode(got.body)).toBe(i % 3 === 2 ? '' : `proc ${winners[0]}`);
      }
      expect(readdirSync(join(root, '.tmp'))).toEqual([]);
      // Every racer opened the fresh root at once: one marker, and all of them wrote in its layout (the reads above).
      expect(JSON.parse(readFileSync(join(root, '.layout'), 'utf8'))).toEqual({ layout: 'flat', dirLevels: 4 });
      contested = wins.filter((w) => w.length > 0).length > 1;
    }
    expect(contested, 'no round had more than one winning process: the processes never raced').toBe(true);
  }, 120_000);

  it('refuses keys that could leave the root or are not file names, and writes nothing', async () => {
    const root = join(t.dir, 'jail');
    const store = new FsStore(root);
    const bad = ['', '..', '../escape', 'a/../../escape', 'a/./b', '/abs', 'a//b', 'a/', 'nul\u0000byte', 'line\nfeed', 'x'.repeat(300), 'a/' + 'b'.repeat(1100), '\ud800lone'];
    for (const k of bad) {
      for (const op of [() => store.putIfAbsent(k, enc.encode('x')), () => store.put(k, enc.encode('x')), () => store.get(k), () => store.delete(k)]) {
        const e = await op().then(() => null, (err: unknown) => err);
        expect(isSessyncError(e, 'bad_input'), `key ${JSON.stringify(k.slice(0, 20))}`).toBe(true);
      }
    }
    expect(existsSync(join(t.dir, 'escape'))).toBe(false);
    expect((await store.list()).keys).toEqual([]);
    // A backslash or a drive-like segment is just a character on disk, not a path.
    expect(await store.putIfAbsent('a\\..\\..\\b', enc.encode('ok'))).toBe(true);
    expect((await store.list()).keys).toEqual(['a\\..\\..\\b']);
    expect(readdirSync(root).sort()).toEqual(['.layout', '.tmp', 'a%5c..%5c..%5cb~']);
  });

  it('encodes names so that case-insensitive file systems keep Foo and foo apart, and decodes only canonical names', () => {
    const samples = ['foo', 'Foo', 'FOO', 'a'.repeat(128), 'A'.repeat(128), 'x.y', '.hidden', '..a', 'é', '日本', '🙂', 'a b', '%41', 'a@b', 'a~', 'Z9_-'];
    for (const s of samples) {
      const name = encodeSegment(s);
      expect(name, s).toBe(name.toLowerCase().replace(/@[0-9a-f]+$/, (m) => m)); // no uppercase letter anywhere
      expect(name.startsWith('.')).toBe(false);
      expect(name).not.toContain('~');
      expect(decodeEntryName(name)).toEqual({ segment: s, isDir: true });
      expect(decodeEntryName(name + '~')).toEqual({ segment: s, isDir: false });
    }
    expect(encodeSegment('A'.repeat(128)).length).toBeLessThanOrEqual(254);
    const lower = new Set(samples.map((s) => encodeSegment(s).toLowerCase()));
    expect(lower.size).toBe(samples.length);
    for (const junk of ['%61', 'A', 'a@0', 'a@', '.tmp', '%zz', '%ff', 'foo@8', 'fOo']) expect(decodeEntryName(junk), junk).toBeNull();
  });

  it('orders keys by UTF-8 bytes, also where JS string order differs', () => {
    expect(compareKeys('\uffff', '\u{10000}')).toBeLessThan(0); // JS says the opposite
    expect(compareKeys('a', 'a/')).toBeLessThan(0);
    expect(compareKeys('a-', 'a/')).toBeLessThan(0);
    expect(compareKeys('é', 'z')).toBeGreaterThan(0);
    expect(compareKeys('same', 'same')).toBe(0);
  });

  it('removes temp files left by a crashed writer, and ignores (with a warning) stray files in the tree', async () => {
    const root = join(t.dir, 'leftovers');
    mkdirSync(join(root, '.tmp'), { recursive: true });
    writeFileSync(join(root, '.tmp', 'old'), 'half a batch');
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(root, '.tmp', 'old'), old, old);
    writeFileSync(join(root, '.tmp', 'recent'), 'a write in progress elsewhere');
    writeFileSync(join(root, 'README'), 'not an object');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const store = new FsStore(root);
      expect(await store.putIfAbsent('k', enc.encode('v'))).toBe(true);
      expect(readdirSync(join(root, '.tmp'))).toEqual(['recent']);
      expect((await store.list()).keys).toEqual(['k']);
      expect(warn.mock.calls.flat().join(' ')).toContain('README');
    } finally {
      warn.mockRestore();
    }
  });

  it('on open: a dead writer\'s temp files and an earlier life\'s of this pid go at once; a live writer\'s stay', async () => {
    const root = join(t.dir, 'temps');
    const tmp = join(root, '.tmp');
    mkdirSync(tmp, { recursive: true });
    const exited = spawn(process.execPath, ['-e', '']);
    const deadPid = await new Promise<number>((resolve) => exited.once('exit', () => resolve(exited.pid!)));
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)']);
    try {
      await new Promise((resolve) => sleeper.once('spawn', resolve));
      writeFileSync(join(tmp, `${deadPid}-0badf00d-aa`), 'half of a dead writer\'s batch');
      writeFileSync(join(tmp, `${process.pid}-0badf00d-bb`), 'this pid, an earlier process (a restarted container)');
      writeFileSync(join(tmp, `${sleeper.pid}-0badf00d-cc`), 'a write in progress in another live process');
      writeFileSync(join(tmp, 'stranger'), 'not named by this store: goes only once it is old');
      const store = new FsStore(root);
      await store.open();
      expect(readdirSync(tmp).sort()).toEqual([`${sleeper.pid}-0badf00d-cc`, 'stranger'].sort());
      expect((await store.list()).keys).toEqual([]);
      expect(await store.get('stranger')).toBeNull();
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('kill -9 between a temp write and its link: readers never see the temp, and the next open removes it', async () => {
    const root = join(t.dir, 'killed');
    const writer = join(t.dir, 'half-writer.mjs');
    // The real write path up to the moment a crash can strike: the temp file written and fsynced, not yet linked.
    await build({
      stdin: {
        contents: `
          import { FsStore } from ${JSON.stringify(join(REPO_ROOT, 'worker/store/fs-store.ts'))};
          const store = new FsStore(process.argv[2]);
          await store.putIfAbsent('a/done', new TextEncoder().encode('complete'));
          await store['writeTemp']('a/half', new Uint8Array(1024 * 1024).fill(0x7b));
          process.stdout.write('temp written\\n');
          setInterval(() => {}, 1000);`,
        resolveDir: REPO_ROOT,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: writer,
      logLevel: 'silent',
    });
    const child = spawn(process.execPath, [writer, root], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => String(d).includes('temp written') && resolve());
      child.once('exit', (code) => reject(new Error(`writer exited ${code} before its temp write`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(readdirSync(join(root, '.tmp'))).toHaveLength(1);
    const reader = new FsStore(root);
    expect((await reader.list()).keys).toEqual(['a/done']);
    expect(await reader.get('a/half')).toBeNull();
    await reader.open();
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
    expect(dec.decode((await reader.get('a/done'))!.body)).toBe('complete');
  }, 60_000);

  it('delete prunes the directories it empties, up to the root', async () => {
    const root = join(t.dir, 'prune');
    const store = new FsStore(root);
    await store.put('a/b/c/d', enc.encode('x'));
    await store.put('a/keep', enc.encode('y'));
    await store.delete('a/b/c/d');
    expect(readdirSync(join(root, 'a')).sort()).toEqual(['keep~']);
    expect(await store.putIfAbsent('a/b/c/d', enc.encode('z'))).toBe(true);
  });

  it('lists a directory of one block (read at once) and a larger one (read on the thread pool) alike: all keys, in order', async () => {
    const root = join(t.dir, 'dir-sizes');
    const store = new FsStore(root);
    const few = ['h/few/a', 'h/few/b', 'h/few/c'];
    const many = Array.from({ length: 600 }, (_, i) => `h/many/${String(i).padStart(12, '0')}`);
    await store.writeMany([...few, ...many].map((key) => ({ key, body: enc.encode(key) })));
    // Both sides of the size the store lists synchronously (one 4 KiB block), on this file system.
    expect(statSync(join(root, 'h', 'few')).size).toBeLessThanOrEqual(4096);
    expect(statSync(join(root, 'h', 'many')).size).toBeGreaterThan(4096);
    expect((await store.list({ prefix: 'h/few/' })).keys).toEqual(few);
    expect((await store.list({ prefix: 'h/many/' })).keys).toEqual(many);
    const all = await store.list({ prefix: 'h/' });
    expect(all.keys).toEqual([...few, ...many]);
  });

  it('reads objects whole whatever their size (around 16 KiB, and several times over), each owning its own bytes', async () => {
    const store = new FsStore(join(t.dir, 'sizes'));
    for (const n of [16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 5 * 16 * 1024 + 7]) {
      const body = Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) % 251);
      expect(await store.putIfAbsent(`sizes/${n}`, body)).toBe(true);
      const got = (await store.get(`sizes/${n}`))!.body;
      expect(got.length).toBe(n);
      expect(Buffer.compare(Buffer.from(got), Buffer.from(body))).toBe(0);
      // Not a view into a buffer shared with other data (Node's pool): its ArrayBuffer holds this object only.
      expect([got.byteOffset, got.buffer.byteLength]).toEqual([0, n]);
    }
  });

  it('leaves no temp file behind after put, putIfAbsent (created or not) and a group of writes', async () => {
    const root = join(t.dir, 'no-temps');
    const store = new FsStore(root);
    await store.put('k/a', enc.encode('1'));
    await store.put('k/a', enc.encode('2'));
    expect(await store.putIfAbsent('k/b', enc.encode('3'))).toBe(true);
    expect(await store.putIfAbsent('k/b', enc.encode('4'))).toBe(false);
    expect(await store.writeMany([{ key: 'k/c', body: enc.encode('5') }, { key: 'k/a', body: enc.encode('6'), replace: true }, { key: 'k/b', body: enc.encode('7') }])).toEqual([true, true, false]);
    expect(readdirSync(join(root, '.tmp'))).toEqual([]);
    expect(dec.decode((await store.get('k/a'))!.body)).toBe('6');
    expect(dec.decode((await store.get('k/b'))!.body)).toBe('3');
  });
});
