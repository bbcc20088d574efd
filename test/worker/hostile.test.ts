// The hostile-input table against the real Node server (HTTP, file-system store): each case a 4xx, a clear message, nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeServer, type RunningServer } from '../../worker/node-server.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { tempDir } from '../helpers/cli.js';
import { HOSTILE_CASES, expectHostileAnswer, hostileRequest, setUpHostile, type HostileContext } from './hostile-cases.js';
import { TEST_ADMIN_SECRET, storeSnapshot } from './routes-helpers.js';

let dir: ReturnType<typeof tempDir>;
let store: FsStore;
let server: RunningServer;
let ctx: HostileContext;

const snapshot = () => storeSnapshot(store);

beforeAll(async () => {
  dir = tempDir('sessync-hostile-');
  store = new FsStore(dir.dir);
  server = await startNodeServer({ store, adminSecret: TEST_ADMIN_SECRET, port: 0 });
  ctx = await setUpHostile({ fetch: (r) => fetch(r) }, server.url, TEST_ADMIN_SECRET);
});

afterAll(async () => {
  await server?.close();
  dir?.cleanup();
});

describe(`hostile input: ${HOSTILE_CASES.length} bad requests against the real Node server`, () => {
  it('covers at least 60 distinct bad requests, and lists them', () => {
    expect(new Set(HOSTILE_CASES.map((c) => c.name)).size).toBe(HOSTILE_CASES.length);
    expect(HOSTILE_CASES.length).toBeGreaterThanOrEqual(60);
    console.log(`hostile-input cases (${HOSTILE_CASES.length}):\n` + HOSTILE_CASES.map((c, i) => `${String(i + 1).padStart(3)}. ${c.status} ${c.name}`).join('\n'));
  });

  it.each(HOSTILE_CASES)('$name -> $status, clear message, nothing stored', async (c) => {
    expect(c.status).toBeGreaterThanOrEqual(400);
    expect(c.status).toBeLessThan(500);
    const before = await snapshot();
    await expectHostileAnswer(c, await fetch(await hostileRequest(c, ctx, server.url)));
    expect(await snapshot()).toEqual(before);
  });
});
