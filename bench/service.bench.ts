// Sync service speed: push/pull throughput over HTTP and requests per no-op sync (local server, file-system store), and
// the server's CPU per push request measured in-process around the app's fetch (file-system and memory stores).
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bench, BenchRow } from './run.js';
import { ApiClient } from '../cli/api-client.js';
import { startLocalServer } from '../worker/local-server.js';
import { FsStore } from '../worker/store/fs-store.js';
import { keys } from '../shared/keys.js';
import type { PushBatchItem, PushBatchRequest } from '../shared/wire.js';
import { concatChunks, encodeFrames, FRAMES_TYPE } from '../shared/batch-frames.js';
import { toFrame } from '../cli/sync/push-wire.js';
import { sha256Hex } from '../worker/sha256.js';
import { createApp } from '../worker/app.js';
import { MemoryStore } from '../worker/store/memory-store.js';
import type { BlobStore } from '../worker/store/blob-store.js';

const ENTRIES_PER_BATCH = 200;
const BATCHES_PER_CLIENT = 25;
const SESSIONS_FOR_NOOP = 1000;
const encoder = new TextEncoder();

/** A realistic entry: a user or assistant message of about 600 bytes. */
function entry(host: string, seq: number, i: number): string {
  return JSON.stringify({
    type: 'message',
    id: `${host}-${seq}-${i}`,
    parentId: i === 0 ? null : `${host}-${seq}-${i - 1}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq, i)).toISOString(),
    message: { role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `message ${i} `.repeat(40) }] },
  });
}

async function batch(session: string, host: string, seq: number, count = ENTRIES_PER_BATCH): Promise<PushBatchRequest> {
  const body = Array.from({ length: count }, (_, i) => entry(host, seq, i)).join('\n') + '\n';
  return {
    envelope: { session, host, seq, batchId: `${host}-${seq}`, entryCount: count, sha256: await sha256Hex(body), encoding: 'jsonl' },
    body,
  };
}

function rate(n: number, ms: number): string {
  return `${Math.round((n * 1000) / ms).toLocaleString('en-US')}`;
}

function mbps(bytes: number, ms: number): string {
  return ((bytes / 1024 / 1024) * 1000 / ms).toFixed(1);
}

/** Pushes BATCHES_PER_CLIENT batches from each of `clients` hosts in parallel; then pulls them all back, one client per session. */
async function throughput(url: string, token: string, clients: number, tag: string): Promise<BenchRow[]> {
  const batchesByClient = await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const out: PushBatchRequest[] = [];
      for (let seq = 1; seq <= BATCHES_PER_CLIENT; seq++) out.push(await batch(`${tag}-s${c}`, `host${c}`, seq));
      return out;
    }),
  );
  const entries = clients * BATCHES_PER_CLIENT * ENTRIES_PER_BATCH;
  const bytes = batchesByClient.flat().reduce((n, b) => n + encoder.encode(b.body).byteLength, 0);

  let t = performance.now();
  await Promise.all(batchesByClient.map(async (list) => {
    const api = new ApiClient({ url, token, retries: 0 });
    for (const b of list) await api.pushBatch(b);
  }));
  const pushMs = performance.now() - t;

  t = performance.now();
  let pulledEntries = 0;
  await Promise.all(batchesByClient.map(async (_, c) => {
    const api = new ApiClient({ url, token, retries: 0 });
    let cursor: Record<string, number> = {};
    for (;;) {
      const r = await api.pull(`${tag}-s${c}`, cursor);
      for (const b of r.batches) pulledEntries += b.envelope.entryCount;
      cursor = r.cursor;
      if (!r.more) break;
    }
  }));
  const pullMs = performance.now() - t;
  if (pulledEntries !== entries) throw new Error(`pulled ${pulledEntries} entries, pushed ${entries}`);

  // Baseline: the same batches written straight into a file-system store (no HTTP, no validation).
  const dir = mkdtempSync(join(tmpdir(), 'sessync-bench-fs-'));
  const fs = new FsStore(dir);
  t = performance.now();
  await Promise.all(batchesByClient.map(async (list) => {
    for (const b of list) await fs.putIfAbsent(keys.batch('bench', b.envelope.session, b.envelope.host, b.envelope.seq), encoder.encode(JSON.stringify(b)));
  }));
  const baseMs = performance.now() - t;
  rmSync(dir, { recursive: true, force: true });

  const who = `${clients} client${clients > 1 ? 's' : ''}`;
  return [
    { name: `push, ${who} (${entries} entries, ${(bytes / 1048576).toFixed(1)} MB)`, value: `${rate(entries, pushMs)} entries/s, ${mbps(bytes, pushMs)} MB/s`, baseline: `${mbps(bytes, baseMs)} MB/s direct FsStore writes`, ratio: pushMs / baseMs },
    { name: `pull, ${who}`, value: `${rate(entries, pullMs)} entries/s, ${mbps(bytes, pullMs)} MB/s`, baseline: `${mbps(bytes, baseMs)} MB/s direct FsStore writes`, ratio: pullMs / baseMs },
  ];
}

/** Requests a client needs to learn that none of 1,000 sessions changed: the pages of /v1/changes. */
async function noopSync(url: string, token: string): Promise<BenchRow> {
  const api = new ApiClient({ url, token, retries: 0 });
  const seeds = Array.from({ length: SESSIONS_FOR_NOOP }, (_, i) => i);
  for (let i = 0; i < seeds.length; i += 16) {
    await Promise.all(seeds.slice(i, i + 16).map(async (n) => api.pushBatch(await batch(`noop-${n}`, 'laptop', 1, 1))));
  }
  const counter = new ApiClient({ url, token, retries: 0 });
  const heads = await counter.allHeads();
  const noopHeads = heads.filter((h) => h.session.startsWith('noop-'));
  if (noopHeads.length !== SESSIONS_FOR_NOOP) throw new Error(`changes listed ${noopHeads.length} of ${SESSIONS_FOR_NOOP} sessions`);
  const requests = counter.requestCount;
  return { name: `requests for a no-op sync of ${SESSIONS_FOR_NOOP} sessions`, value: String(requests), baseline: `${SESSIONS_FOR_NOOP} (one per session)`, ratio: requests / SESSIONS_FOR_NOOP, goal: '<= 2', pass: requests <= 2 };
}


/** CPU per push request: on Workers the free plan allows 10 ms per request, the paid plans 30 s by default. */
const CPU_SAMPLES = Number(process.env.SESSYNC_BENCH_CPU_SAMPLES) || 60;
const CPU_WARMUP = 10;
const CPU_ADMIN = 'bench-admin-secret-Q7vB2xLn9WkE4tZr';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** A 1,000-entry batch of about 1 MB (entries of about 1 KiB, as real messages are). */
async function megabyteBatch(session: string, seq: number): Promise<PushBatchRequest> {
  const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({
    type: 'message',
    id: `cpu-${seq}-${i}`,
    parentId: i === 0 ? null : `cpu-${seq}-${i - 1}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq, i)).toISOString(),
    message: { role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `message ${i} of batch ${seq}: `.padEnd(900, 'lorem ipsum dolor sit amet ') }] },
  }));
  const body = lines.join('\n') + '\n';
  return { envelope: { session, host: 'cpu', seq, batchId: `cpu-${seq}`, entryCount: 1000, sha256: await sha256Hex(body), encoding: 'jsonl' }, body };
}

/** A ciphertext batch of the same size: 1 MB of random bytes, raw, as an encrypted account's client sends it. */
async function cipherBatch(session: string, seq: number): Promise<PushBatchItem> {
  const raw = new Uint8Array(1024 * 1024);
  for (let i = 0; i < raw.length; i += 65536) crypto.getRandomValues(raw.subarray(i, i + 65536));
  return { envelope: { session, host: 'cpu', seq, batchId: `cpu-${seq}`, entryCount: 1000, sha256: await sha256Hex(raw), encoding: 'aes-256-gcm' }, body: raw };
}

/** Process CPU (user + system, all threads) of each request `make` builds, one at a time through the app's fetch. */
async function cpuPerRequest(store: BlobStore, make: (token: string, n: number) => Promise<Request>, expect: number, warmup: number, samples: number): Promise<number[]> {
  const app = createApp({ store, adminSecret: CPU_ADMIN });
  const created = await app.fetch(new Request('http://bench/v1/admin/accounts', { method: 'POST', headers: { authorization: `Bearer ${CPU_ADMIN}`, 'content-type': 'application/json' }, body: '{}' }));
  const { token } = (await created.json()) as { token: string };
  const out: number[] = [];
  for (let n = 1; n <= warmup + samples; n++) {
    const req = await make(token, n);
    const before = process.cpuUsage();
    const res = await app.fetch(req);
    const text = await res.text();
    const used = process.cpuUsage(before);
    if (res.status !== expect) throw new Error(`push answered ${res.status}: ${text.slice(0, 200)}`);
    if (n > warmup) out.push((used.user + used.system) / 1000);
  }
  return out.sort((a, b) => a - b);
}

/** One batch per request to POST /v1/sessions/:session/batches, sent as frames (as the client sends). */
function cpuPerPush(store: BlobStore, make: (session: string, seq: number) => Promise<PushBatchItem>): Promise<number[]> {
  return cpuPerRequest(store, async (token, seq) => {
    const body = concatChunks(encodeFrames([toFrame(await make('cpu-session', seq))])) as Uint8Array<ArrayBuffer>;
    return new Request('http://bench/v1/sessions/cpu-session/batches', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': FRAMES_TYPE }, body });
  }, 201, CPU_WARMUP, CPU_SAMPLES);
}

/** Sessions per POST /v1/batches in a first push, as the client fills them (cli/sync/sync-run.ts). */
const FIRST_PUSH_SESSIONS = 32;

/**
 * The server's half of a first push, one request of it: FIRST_PUSH_SESSIONS new sessions, each its first batch of
 * 100 entries (about 100 KB) with its meta, to POST /v1/batches as frames. Every request brings new sessions, so
 * the store makes their folders, metas and heads as on a first sync.
 */
async function cpuPerFirstPushRequest(store: BlobStore): Promise<{ ms: number[]; bytes: number }> {
  let bytes = 0;
  const ms = await cpuPerRequest(store, async (token, n) => {
    const items: PushBatchItem[] = [];
    for (let s = 0; s < FIRST_PUSH_SESSIONS; s++) {
      const session = `first-${n}-${s}`;
      const b = await batch(session, 'laptop', 1, 100);
      items.push({ ...b, meta: { header: { type: 'session', version: 3, id: session, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/projects/bench' }, projectKey: 'bench-project' } });
    }
    const body = concatChunks(encodeFrames(items.map(toFrame))) as Uint8Array<ArrayBuffer>;
    bytes = body.byteLength;
    return new Request('http://bench/v1/batches', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': FRAMES_TYPE }, body });
  }, 200, 3, Math.max(10, Math.round(CPU_SAMPLES / 3)));
  return { ms, bytes };
}

/** File creates timed per measured file-system row: enough for a steady median, few enough to add no cost of their own. */
const CREATE_PROBES = 100;

/**
 * CPU of one file create (open O_EXCL + close) in the store's temp folder now, median of CREATE_PROBES, in us: where
 * the store creates every file it writes. On ext4 without a journal a create walks the inodes freed in the last
 * minutes (common after a bench or a test deleted thousands of files), so this is printed beside each file-system
 * row: the row's figure includes that cost, as a user on such a disk pays it. The files are kept (a delete would add
 * to the walk of the next create) and go with the bench's folder at the end.
 */
async function createCostUs(store: FsStore): Promise<number> {
  await store.open();
  const t: number[] = [];
  for (let i = 0; i < CREATE_PROBES; i++) {
    const before = process.cpuUsage();
    closeSync(openSync(join(store.root, '.tmp', `bench-create-${i}`), 'wx', 0o600));
    const used = process.cpuUsage(before);
    t.push(used.user + used.system);
  }
  return percentile(t.sort((a, b) => a - b), 50);
}

/**
 * What a file-system row's figure holds of the disk's create cost: `n` creates per request at the cost measured just
 * before the row, and their total, so a reader can tell this disk's state from the code's cost.
 */
function createNote(us: number | null, n: number, what: string): string {
  return us === null ? '' : `; ${n} file creates per request (${what}) at ${us.toFixed(0)} us of CPU each in this store now: ${((n * us) / 1000).toFixed(2)} ms`;
}

/**
 * The server-CPU rows. The bench runs them before its other rows create or delete files (see bench.run); what earlier
 * processes freed shows in the create cost printed beside each file-system row.
 */
export async function cpuRows(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'sessync-bench-cpu-'));
  try {
    const fsStore = (name: string) => async () => new FsStore(join(dir, name));
    const cases: [string, () => Promise<BlobStore>, (session: string, seq: number) => Promise<PushBatchItem>, number][] = [
      ['1 MB / 1,000-entry batch, file-system store', fsStore('a'), megabyteBatch, 10],
      ['1 MB / 1,000-entry batch, memory store', async () => new MemoryStore(), megabyteBatch, 10],
      ['1 MB ciphertext batch, file-system store', fsStore('b'), cipherBatch, 2],
      ['1 MB ciphertext batch, memory store', async () => new MemoryStore(), cipherBatch, 2],
    ];
    for (const [name, open, make, goal] of cases) {
      const store = await open();
      const creates = store instanceof FsStore ? await createCostUs(store) : null;
      const t = await cpuPerPush(store, make);
      const p50 = percentile(t, 50);
      rows.push({ name: `server CPU per push request: ${name}`, value: `p50 ${p50.toFixed(1)} ms, p99 ${percentile(t, 99).toFixed(1)} ms (${t.length} requests)${createNote(creates, 2, 'the batch, the head')}`, goal: `p50 <= ${goal} ms`, pass: p50 <= goal });
    }
    // No goal of its own: the first push's goal is its wall time (bench/sync.bench.ts); this is the server's share.
    for (const [name, open] of [['file-system store', fsStore('c')], ['memory store', async () => new MemoryStore()]] as const) {
      const store = await open();
      const creates = store instanceof FsStore ? await createCostUs(store) : null;
      const { ms: t, bytes } = await cpuPerFirstPushRequest(store);
      rows.push({ name: `server CPU per first-push request (${FIRST_PUSH_SESSIONS} new sessions x 100 entries, ${(bytes / 1e6).toFixed(1)} MB), ${name}`, value: `p50 ${percentile(t, 50).toFixed(1)} ms, p99 ${percentile(t, 99).toFixed(1)} ms (${t.length} requests)${createNote(creates, FIRST_PUSH_SESSIONS * 5, '3 files and 2 folders per session')}` });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

const bench: Bench = {
  title: 'Sync service (local server, file-system store, over HTTP)',
  async run() {
    const dataDir = mkdtempSync(join(tmpdir(), 'sessync-bench-server-'));
    const server = await startLocalServer({ port: 0, dataDir });
    try {
      // The server-CPU rows first, after nothing of this bench: the throughput rows delete their baseline stores (on
      // ext4 without a journal every create for minutes after walks the inodes they freed), and the no-op rows create
      // thousands of files, which fill the block group others' deletes left and made the creates after them look
      // cheap (8-36 us against 60-230 us measured first). cpuRows deletes only at its end.
      const cpu = await cpuRows();
      return [
        ...(await throughput(server.url, server.token, 1, 'one')),
        ...(await throughput(server.url, server.token, 8, 'eight')),
        await noopSync(server.url, server.token),
        ...cpu,
      ];
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
export default bench;
