// Sync service speed against the local server (HTTP, file-system store): push/pull throughput and requests per no-op sync.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bench, BenchRow } from './run.js';
import { ApiClient } from '../cli/api-client.js';
import { startLocalServer } from '../worker/local-server.js';
import { FsStore } from '../worker/store/fs-store.js';
import { keys } from '../shared/keys.js';
import type { PushBatchRequest } from '../shared/wire.js';
import { sha256Hex } from '../worker/sha256.js';

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

const bench: Bench = {
  title: 'Sync service (local server, file-system store, over HTTP)',
  async run() {
    const dataDir = mkdtempSync(join(tmpdir(), 'sessync-bench-server-'));
    const server = await startLocalServer({ port: 0, dataDir });
    try {
      return [
        ...(await throughput(server.url, server.token, 1, 'one')),
        ...(await throughput(server.url, server.token, 8, 'eight')),
        await noopSync(server.url, server.token),
      ];
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
export default bench;
