// Remote deletion on Node: the shared case on the memory store and on the file-system store (real files).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { FsStore } from '../../worker/store/fs-store.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { describeSessionDelete } from './session-delete.case.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describeSessionDelete('memory', async () => ({ store: new MemoryStore() }));
describeSessionDelete('file system', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sessync-delete-'));
  dirs.push(dir);
  return { store: new FsStore(dir) };
});
