// Load: 32 clients push and pull at once against `sessync serve` on loopback for a bounded time and count, then every
// session is read back from nothing and checked entry by entry: zero lost, zero duplicated.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bench, BenchRow } from './run.js';
import { ApiClient } from '../cli/api-client.js';
import { sha256Hex } from '../worker/sha256.js';
import type { Cursor, PushBatchRequest } from '../shared/wire.js';
import { startServe } from './serve-process.js';

const CLIENTS = 32;
/** Wall time of the load phase; $SESSYNC_BENCH_LOAD_SECONDS shortens it. */
const SECONDS = Number(process.env.SESSYNC_BENCH_LOAD_SECONDS) || 60;
/** Push + pull rounds per client at most: bounds the run in count as well as in time. */
const MAX_ROUNDS = 2_000;
const ENTRIES_PER_BATCH = 50;

function entryLine(client: number, seq: number, i: number): string {
  return JSON.stringify({
    type: 'message',
    id: `load-${client}-${seq}-${i}`,
    parentId: i === 0 ? null : `load-${client}-${seq}-${i - 1}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq, i)).toISOString(),
    message: { role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `client ${client} batch ${seq} entry ${i} `.padEnd(400, 'x') }] },
  });
}

async function batchOf(client: number, seq: number): Promise<PushBatchRequest> {
  const body = Array.from({ length: ENTRIES_PER_BATCH }, (_, i) => entryLine(client, seq, i)).join('\n') + '\n';
  return { envelope: { session: `load-s${client}`, host: `load-h${client}`, seq, batchId: `load-${client}-${seq}`, entryCount: ENTRIES_PER_BATCH, sha256: await sha256Hex(body), encoding: 'jsonl' }, body };
}

function idsOf(body: string): string[] {
  return body.split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { id: string }).id);
}

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const bench: Bench = {
  title: `Load (${CLIENTS} clients pushing and pulling for ${SECONDS} s, sessync serve on loopback)`,
  async run(): Promise<BenchRow[]> {
    const dir = mkdtempSync(join(tmpdir(), 'sessync-load-bench-'));
    const server = await startServe(join(dir, 'server'));
    try {
      if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(server.url)) throw new Error(`the load goes to loopback only, not ${server.url}`);
      const pushMs: number[] = [];
      const pullMs: number[] = [];
      /** What each client had acknowledged: its session's entry ids in order. */
      const acked: string[][] = Array.from({ length: CLIENTS }, () => []);
      /** Per reader and session read: ids seen through incremental pulls (a batch served twice shows as a repeat). */
      const seen: Map<number, string[]>[] = Array.from({ length: CLIENTS }, () => new Map());
      let bytes = 0;
      const deadline = performance.now() + SECONDS * 1000;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
        // No retries: an error under load is a finding, not something to hide.
        const api = new ApiClient({ url: server.url, token: server.token, retries: 0 });
        const cursors = new Map<number, Cursor>();
        for (let round = 1; round <= MAX_ROUNDS && performance.now() < deadline; round++) {
          const b = await batchOf(c, round);
          let t = performance.now();
          await api.pushBatch(b);
          pushMs.push(performance.now() - t);
          bytes += b.body.length;
          acked[c]!.push(...idsOf(b.body));
          // Pull from another client's session, as a second machine of that user would.
          const other = (c + round) % CLIENTS;
          let cursor = cursors.get(other) ?? {};
          t = performance.now();
          for (;;) {
            const r = await api.pull(`load-s${other}`, cursor).catch((e: unknown) => {
              // A session not pushed yet has no heads: nothing to read, not an error of the load.
              if ((e as { code?: string }).code === 'not_found') return null;
              throw e;
            });
            if (!r) break;
            const list = seen[c]!.get(other) ?? [];
            for (const x of r.batches) list.push(...idsOf(x.body));
            seen[c]!.set(other, list);
            cursor = r.cursor;
            if (!r.more) break;
          }
          pullMs.push(performance.now() - t);
          cursors.set(other, cursor);
        }
      }));
      const wallMs = performance.now() - t0;

      // The check: every session from nothing holds exactly what its client had acknowledged, each entry once, and
      // no reader was ever served an entry twice or one its writer never pushed.
      const checker = new ApiClient({ url: server.url, token: server.token });
      let lost = 0;
      let doubled = 0;
      for (let c = 0; c < CLIENTS; c++) {
        const stored: string[] = [];
        let cursor: Cursor = {};
        for (;;) {
          const r = await checker.pull(`load-s${c}`, cursor);
          for (const x of r.batches) stored.push(...idsOf(x.body));
          cursor = r.cursor;
          if (!r.more) break;
        }
        const have = new Set(stored);
        doubled += stored.length - have.size;
        lost += acked[c]!.filter((id) => !have.has(id)).length;
        const pushed = new Set(acked[c]!);
        for (const reader of seen) {
          const got = reader.get(c) ?? [];
          doubled += got.length - new Set(got).size;
          lost += got.filter((id) => !pushed.has(id)).length; // served but never pushed: counted as wrong
        }
      }
      pushMs.sort((a, b) => a - b);
      pullMs.sort((a, b) => a - b);
      const requests = pushMs.length + pullMs.length;
      const entries = acked.reduce((n, a) => n + a.length, 0);
      return [
        {
          name: `load: ${CLIENTS} clients, ${(wallMs / 1000).toFixed(0)} s, ${requests.toLocaleString('en-US')} requests`,
          value: `${Math.round((requests * 1000) / wallMs)} requests/s, ${Math.round((entries * 1000) / wallMs).toLocaleString('en-US')} entries/s pushed, ${((bytes / 1048576) * 1000 / wallMs).toFixed(1)} MB/s`,
        },
        { name: 'load: push latency', value: `p50 ${pct(pushMs, 50).toFixed(0)} ms, p99 ${pct(pushMs, 99).toFixed(0)} ms (${pushMs.length} pushes)` },
        { name: 'load: pull latency', value: `p50 ${pct(pullMs, 50).toFixed(0)} ms, p99 ${pct(pullMs, 99).toFixed(0)} ms (${pullMs.length} pulls)` },
        { name: 'load: entries lost or duplicated (checked by reading every session back)', value: `${lost} lost, ${doubled} duplicated of ${entries.toLocaleString('en-US')}`, goal: '0', pass: lost === 0 && doubled === 0 },
      ];
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
