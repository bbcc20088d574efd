// alignLeaf decides from the file as it is read, and takes the file's lock only to write a marker: a file whose
// leaves agree is checked while another process holds its lock; one that needs a marker waits for the lock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { SessionHeader } from '../../shared/entry.js';
import { alignLeaf } from '../../cli/store/leaf-marker.js';
import { lockPath } from '../../cli/store/file-lock.js';
import { useTempHome } from '../helpers/cli.js';
import { writeLines } from './cli-env.js';

const dir = useTempHome('sessync-leaf-check-', { beforeEach, afterEach });

const m = (id: string, parentId: string | null, ts: string) => ({ type: 'message', id, parentId, timestamp: ts, message: { role: 'user', content: id } });
const header = { type: 'session', version: 3, id: 'h', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' };

describe('alignLeaf and the file lock', () => {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.SESSYNC_LOCK_TIMEOUT_MS;
    process.env.SESSYNC_LOCK_TIMEOUT_MS = '200'; // the holder below never lets go: a wait for it fails soon
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.SESSYNC_LOCK_TIMEOUT_MS;
    else process.env.SESSYNC_LOCK_TIMEOUT_MS = saved;
  });

  /** The lock of `path` held by a live process (this one), as another sessync writing the file would hold it. */
  const holdLock = (path: string) => writeFileSync(lockPath(path), JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));

  it('leaves that agree: null, without waiting for the lock, and the file unchanged', async () => {
    const path = join(dir.dir, 'agree.jsonl');
    writeLines(path, [header, m('a', null, '2026-01-01T00:00:01.000Z'), m('b', 'a', '2026-01-01T00:00:02.000Z')]);
    const before = readFileSync(path, 'utf8');
    holdLock(path);
    await expect(alignLeaf(path, 'local')).resolves.toBeNull();
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('leaves that differ: the marker waits for the lock (and fails as locked when its holder stays), the file unchanged', async () => {
    const path = join(dir.dir, 'differ.jsonl');
    writeLines(path, [header, m('a', null, '2026-01-01T00:00:01.000Z'), m('new', 'a', '2026-01-01T00:00:09.000Z'), m('old', 'a', '2026-01-01T00:00:02.000Z')]);
    const before = readFileSync(path, 'utf8');
    holdLock(path);
    await expect(alignLeaf(path, 'merged')).rejects.toMatchObject({ code: 'locked' });
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('a missing file: not_found, as an append says it', async () => {
    await expect(alignLeaf(join(dir.dir, 'gone.jsonl'), 'local', { ok: true, header: header as SessionHeader })).rejects.toMatchObject({ code: 'not_found' });
  });
});
