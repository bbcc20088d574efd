// The push's read buffers: taken again only once given back, never twice at once; a push that reuses them stores every session byte for byte.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { readBuffer, readBufferCounts, recycleRead } from '../../cli/sync/read-buffers.js';
import { runSync } from '../../cli/sync/sync-run.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { serializeLine } from '../../shared/jsonl.js';
import { useServer } from './helpers.js';

describe('readBuffer and recycleRead', () => {
  it('a buffer given back is taken again (by a read of its size class), once; foreign and repeated give-backs are ignored', () => {
    const a = readBuffer(70_000);
    expect(a.byteLength).toBe(70_000);
    recycleRead(a.subarray(10, 20)); // any view of it gives back the whole buffer
    recycleRead(a); // a second time: ignored
    recycleRead(Buffer.alloc(70_000)); // not one of ours: ignored
    const b = readBuffer(100_000);
    const c = readBuffer(100_000);
    expect(b.buffer).toBe(a.buffer);
    expect(c.buffer).not.toBe(a.buffer); // not handed out twice
    const small = readBuffer(10);
    expect(small.buffer.byteLength).toBe(65_536); // its own memory, not Node's shared pool
  });
});

describe('a push that reads into buffers used again', () => {
  const rig = useServer(undefined, 'sessync-read-buffers-');

  /** `count` sessions of distinct entries (about 20 KB each), written as pi writes them; their paths. */
  function plant(home: string, cwd: string, count: number): Map<string, string> {
    const dir = projectDir(join(home, 'sessions'), cwd);
    mkdirSync(dir, { recursive: true });
    const out = new Map<string, string>();
    for (let n = 0; n < count; n++) {
      const id = `${n.toString().padStart(8, '0')}-read-buffers`;
      const timestamp = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString();
      let text = serializeLine({ type: 'session', version: 3, id, timestamp, cwd } as never) + '\n';
      for (let i = 0; i < 40; i++) {
        const words = `${n}:${i} `.repeat(40 + ((n * 7 + i) % 60));
        text += serializeLine({ type: 'message', id: `rb${n}-${i}`, parentId: i ? `rb${n}-${i - 1}` : null, timestamp, message: { role: 'user', content: words } } as never) + '\n';
      }
      const path = join(dir, sessionFileName(timestamp, id));
      writeFileSync(path, text);
      out.set(id, text);
    }
    return out;
  }

  it('takes buffers again after their batches are acknowledged, and every session arrives as it was written', async () => {
    const cwd = join(rig.root, 'project');
    mkdirSync(cwd, { recursive: true });
    const laptop = join(rig.root, 'laptop');
    const desktop = join(rig.root, 'desktop');
    const files = plant(laptop, cwd, 150);
    const before = { ...readBufferCounts };
    const api = () => new ApiClient({ url: rig.server.url, token: rig.server.token });
    expect(await runSync({ mode: 'push', all: true, cwd, env: { SESSYNC_HOME: laptop }, api: api() })).toMatchObject({ failed: 0, pushedSessions: 150 });
    // Every acknowledged batch gave its buffer back, and later reads took them: far fewer made than files read.
    expect(readBufferCounts.given - before.given).toBe(150);
    expect(readBufferCounts.reused - before.reused).toBeGreaterThan(30);
    expect(readBufferCounts.made - before.made).toBeLessThan(120);
    expect(await runSync({ mode: 'pull', all: true, cwd, env: { SESSYNC_HOME: desktop }, api: api() })).toMatchObject({ failed: 0, createdSessions: 150 });
    const dir = projectDir(join(desktop, 'sessions'), cwd);
    const pulled = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    expect(pulled).toHaveLength(150);
    for (const [id, text] of files) {
      const name = pulled.find((f) => f.includes(id))!;
      const lines = (s: string) => s.split('\n').filter((l) => l !== '' && !l.includes('"type":"session"'));
      expect(lines(readFileSync(join(dir, name), 'utf8')), id).toEqual(lines(text));
    }
  }, 60_000);

  it('with a fetch given (an app in this process may keep the bodies), no buffer is given back', async () => {
    const cwd = join(rig.root, 'project-fetch');
    mkdirSync(cwd, { recursive: true });
    const home = join(rig.root, 'fetch-laptop');
    plant(home, cwd, 20);
    const before = { ...readBufferCounts };
    const api = new ApiClient({ url: rig.server.url, token: rig.server.token, fetch: (input, init) => fetch(input, init) });
    expect(api.bodiesCopied).toBe(false);
    expect(await runSync({ mode: 'push', all: true, cwd, env: { SESSYNC_HOME: home }, api })).toMatchObject({ failed: 0, pushedSessions: 20 });
    expect(readBufferCounts.made + readBufferCounts.reused - before.made - before.reused).toBeGreaterThanOrEqual(20);
    expect(readBufferCounts.given - before.given).toBe(0);
  }, 60_000);
});
