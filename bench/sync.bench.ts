// Sync client speed against the local server: bytes sent for one appended entry to a 100 MB session, requests per
// no-op sync of 1,000 sessions, first push and first pull of 1,000 sessions / 100 MB beside a plain copy (and, with
// SESSYNC_BENCH_BIG=1, of 3,000 sessions / 1 GB), against `sessync serve` running as its own process.
import { cp, mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bench, BenchRow } from './run.js';
import { ApiClient } from '../cli/api-client.js';
import { runSync } from '../cli/sync/sync-run.js';
import { appendEntries } from '../cli/store/session-writer.js';
import { projectDir, sessionFileName } from '../cli/store/paths.js';
import { serializeLine } from '../shared/jsonl.js';
import type { SessionEntry, SessionHeader } from '../shared/entry.js';
import { startServe } from './serve-process.js';

const MB = 1024 * 1024;
const SESSIONS = 1_000;
const TOTAL_BYTES = 100 * MB;

/** A message entry of about `size` bytes, id and parent chained like a real session. */
function message(session: string, i: number, size: number): SessionEntry {
  const text = `line ${i}: `.padEnd(size - 220, 'lorem ipsum dolor sit amet ');
  return {
    type: 'message',
    id: `${session.slice(0, 8)}-${i.toString(36).padStart(8, '0')}`,
    parentId: i === 0 ? null : `${session.slice(0, 8)}-${(i - 1).toString(36).padStart(8, '0')}`,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    message: { role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text }] },
  };
}

/**
 * Flushes every dirty page to the disk (coreutils `sync`) before a timed phase, so no phase pays for the writeback of
 * the one before it: the plain copy's 100 MB left dirty in the page cache would otherwise be written back while the
 * push's server fsyncs its own files, and charged to the push.
 */
function settle(): void {
  execFileSync('sync');
}

/** Writes a session file of about `bytes` in pi's layout under `root`; returns its path. */
async function writeSession(root: string, cwd: string, id: string, bytes: number, entrySize = 1024): Promise<string> {
  const header: SessionHeader = { type: 'session', version: 3, id, timestamp: new Date(Date.UTC(2026, 0, 1)).toISOString(), cwd };
  const dir = projectDir(root, cwd);
  await mkdir(dir, { recursive: true });
  const path = join(dir, sessionFileName(header.timestamp, id));
  const fh = await open(path, 'w');
  let chunk = serializeLine(header) + '\n';
  let written = 0;
  for (let i = 0; written + chunk.length < bytes; i++) {
    const line = serializeLine(message(id, i, entrySize)) + '\n';
    chunk += line;
    if (chunk.length > MB) {
      await fh.write(chunk);
      written += chunk.length;
      chunk = '';
    }
  }
  await fh.write(chunk);
  await fh.close();
  return path;
}

/**
 * Api clients as the CLI makes them (its own node:http transport, not a fetch given in their place), with the requests
 * and request-body bytes they sent summed since the last reset: what the sync client really sends.
 */
function countingClients(url: string, token: string): { api: () => ApiClient; bytes: () => number; requests: () => number; reset(): void } {
  let made: ApiClient[] = [];
  const sum = (f: (c: ApiClient) => number) => made.reduce((n, c) => n + f(c), 0);
  return {
    api: () => {
      const c = new ApiClient({ url, token });
      made.push(c);
      return c;
    },
    bytes: () => sum((c) => c.bytesSent),
    requests: () => sum((c) => c.requestCount),
    reset: () => void (made = []),
  };
}

const ms = (t0: number) => performance.now() - t0;
/** This process's CPU (user + system) since `from`: the client's share, steadier than wall time on a busy machine. */
const cpuSeconds = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return `${((u.user + u.system) / 1e6).toFixed(1)} s`;
};
const mbps = (bytes: number, t: number) => ((bytes / MB) * 1000) / t;

/**
 * A copy made durable as the server must make what it stores: cp, then every file and folder of the copy fsynced.
 * A reference beside the goal's plain copy, whose data the kernel writes back later, outside its measured time.
 */
async function durableCopy(from: string, to: string): Promise<number> {
  const t0 = performance.now();
  await cp(from, to, { recursive: true });
  const syncAll = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) await syncAll(join(dir, e.name));
      else {
        const fh = await open(join(dir, e.name), 'r');
        await fh.sync();
        await fh.close();
      }
    }
    const fh = await open(dir, 'r');
    await fh.sync();
    await fh.close();
  };
  await syncAll(to);
  return ms(t0);
}

const BIG_SESSIONS = 3_000;
const BIG_BYTES = 1024 * MB;

/** SESSYNC_BENCH_BIG=1: the first push of 3,000 sessions / 1 GB beside a plain copy (minutes; CI skips it). */
async function bigFirstPush(dir: string, server: { url: string }, api: () => ApiClient): Promise<BenchRow> {
  const cwd = join(dir, 'big-many-project');
  await mkdir(cwd, { recursive: true });
  const home = join(dir, 'big-many-home');
  for (let i = 0; i < BIG_SESSIONS; i++) {
    await writeSession(join(home, 'sessions'), cwd, `0001${i.toString().padStart(4, '0')}-bench-big-many-session`, BIG_BYTES / BIG_SESSIONS);
  }
  settle();
  let t0 = performance.now();
  await cp(join(home, 'sessions'), join(dir, 'big-plain-copy'), { recursive: true });
  const copyMs = ms(t0);
  settle();
  t0 = performance.now();
  let journal = { fsyncs: 0, requests: 0 };
  const cpu0 = process.cpuUsage();
  const r = await runSync({ mode: 'push', all: true, cwd, env: { SESSYNC_HOME: home }, api: api(), onJournal: (x) => (journal = x) });
  const pushMs = ms(t0);
  const pushCpu = cpuSeconds(cpu0);
  if (r.failed || r.pushedSessions !== BIG_SESSIONS) throw new Error(`big first push: ${r.pushedSessions} sessions pushed, ${r.failed} failed (server ${server.url})`);
  return {
    name: `first push of ${BIG_SESSIONS} sessions / ${(r.pushedBytes / MB).toFixed(0)} MB`,
    value: `${mbps(r.pushedBytes, pushMs).toFixed(1)} MB/s (${(pushMs / 1000).toFixed(1)} s, ${r.requests} requests, ${journal.fsyncs} state fsyncs, client CPU ${pushCpu})`,
    baseline: `plain copy ${mbps(r.pushedBytes, copyMs).toFixed(0)} MB/s (${(copyMs / 1000).toFixed(2)} s)`,
    ratio: pushMs / copyMs,
    goal: '<= 2x a plain copy',
    pass: pushMs <= 2 * copyMs,
  };
}

const bench: Bench = {
  title: 'Sync client',
  async run(): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'sessync-sync-bench-'));
    const server = await startServe(join(dir, 'server'));
    try {
      const counter = countingClients(server.url, server.token);
      const api = counter.api;

      // 1,000 sessions / 100 MB: first push, beside a plain copy of the same files.
      const cwdMany = join(dir, 'many-project');
      await mkdir(cwdMany, { recursive: true });
      const manyHome = join(dir, 'many-home');
      const manyEnv = { SESSYNC_HOME: manyHome };
      for (let i = 0; i < SESSIONS; i++) {
        await writeSession(join(manyHome, 'sessions'), cwdMany, `0000${i.toString().padStart(4, '0')}-bench-many-session`, TOTAL_BYTES / SESSIONS);
      }
      settle();
      let t0 = performance.now();
      await cp(join(manyHome, 'sessions'), join(dir, 'plain-copy'), { recursive: true });
      const copyMs = ms(t0);
      settle();
      const durableMs = await durableCopy(join(manyHome, 'sessions'), join(dir, 'durable-copy'));
      settle();
      t0 = performance.now();
      let journal = { fsyncs: 0, requests: 0 };
      const cpu0 = process.cpuUsage();
      const first = await runSync({ mode: 'push', all: true, cwd: cwdMany, env: manyEnv, api: api(), onJournal: (x) => (journal = x) });
      const pushMs = ms(t0);
      const pushCpu = cpuSeconds(cpu0);
      if (first.failed || first.pushedSessions !== SESSIONS) throw new Error(`first push: ${first.pushedSessions} sessions pushed, ${first.failed} failed`);
      rows.push({
        name: `first push of ${SESSIONS} sessions / ${(first.pushedBytes / MB).toFixed(0)} MB (${first.pushedEntries.toLocaleString('en-US')} entries)`,
        // Durable client-state writes while the requests went (the journal's fsyncs; its compaction at the end apart).
        value: `${mbps(first.pushedBytes, pushMs).toFixed(1)} MB/s (${(pushMs / 1000).toFixed(1)} s, ${first.requests} requests, ${journal.fsyncs} state fsyncs, client CPU ${pushCpu})`,
        baseline: `plain copy ${mbps(first.pushedBytes, copyMs).toFixed(0)} MB/s (${(copyMs / 1000).toFixed(2)} s)`,
        ratio: pushMs / copyMs,
        goal: '<= 2x a plain copy',
        pass: pushMs <= 2 * copyMs,
      });
      rows.push({
        name: 'same push, against a durable copy (reference: the plain copy with every file and folder fsynced, as the server stores)',
        value: `${(pushMs / 1000).toFixed(1)} s`,
        baseline: `durable copy ${mbps(first.pushedBytes, durableMs).toFixed(0)} MB/s (${(durableMs / 1000).toFixed(2)} s)`,
        ratio: pushMs / durableMs,
      });

      // Pull of the same 1,000 sessions into an empty machine, beside the same plain copy.
      const pullHome = join(dir, 'pull-home');
      const pullCwd = join(dir, 'pull-project');
      await mkdir(pullCwd, { recursive: true });
      counter.reset();
      settle();
      // CPU of both sides as well as the wall time: on a loaded machine the wall time says little on its own.
      const serverCpu0 = server.cpuMs();
      const clientCpu0 = process.cpuUsage();
      t0 = performance.now();
      const pulled = await runSync({ mode: 'pull', all: true, cwd: pullCwd, env: { SESSYNC_HOME: pullHome }, api: api() });
      const pullMs = ms(t0);
      const clientCpu = process.cpuUsage(clientCpu0);
      const serverCpu = serverCpu0 === null ? null : (server.cpuMs() ?? serverCpu0) - serverCpu0;
      const cpu = `CPU: client ${((clientCpu.user + clientCpu.system) / 1e6).toFixed(1)} s${serverCpu === null ? '' : `, server ${(serverCpu / 1000).toFixed(1)} s`}`;
      if (pulled.failed || pulled.createdSessions !== SESSIONS || pulled.pulledEntries !== first.pushedEntries) {
        throw new Error(`pull into an empty machine: ${pulled.createdSessions} sessions, ${pulled.pulledEntries} entries, ${pulled.failed} failed`);
      }
      rows.push({
        name: `pull of the same into an empty machine (${pulled.pulledEntries.toLocaleString('en-US')} entries)`,
        value: `${mbps(first.pushedBytes, pullMs).toFixed(1)} MB/s (${(pullMs / 1000).toFixed(1)} s, ${counter.requests()} requests; ${cpu})`,
        baseline: `plain copy ${mbps(first.pushedBytes, copyMs).toFixed(0)} MB/s (${(copyMs / 1000).toFixed(2)} s)`,
        ratio: pullMs / copyMs,
        goal: '<= 2x a plain copy',
        pass: pullMs <= 2 * copyMs,
      });
      rows.push({
        name: 'same pull, against the durable copy (reference)',
        value: `${(pullMs / 1000).toFixed(1)} s`,
        baseline: `durable copy (${(durableMs / 1000).toFixed(2)} s)`,
        ratio: pullMs / durableMs,
      });

      // No-op sync of the same 1,000 sessions: one /v1/changes walk, nothing else.
      counter.reset();
      const noop = await runSync({ mode: 'sync', all: true, cwd: cwdMany, env: manyEnv, api: api() });
      rows.push({
        name: `no-op sync of ${SESSIONS} sessions: HTTP requests`,
        value: String(counter.requests()),
        goal: '<= 2',
        pass: counter.requests() <= 2 && noop.pushedEntries === 0 && noop.pulledEntries === 0,
      });
      console.log(`no-op sync of ${SESSIONS} sessions made ${counter.requests()} HTTP request(s)`);

      // One entry appended to a 100 MB session: only that entry (plus the envelope) goes over the wire.
      const bigHome = join(dir, 'big-home');
      const bigEnv = { SESSYNC_HOME: bigHome };
      const cwdBig = join(dir, 'big-project');
      await mkdir(cwdBig, { recursive: true });
      const bigId = '00000001-bench-big-session';
      const bigPath = await writeSession(join(bigHome, 'sessions'), cwdBig, bigId, 100 * MB);
      await runSync({ mode: 'push', ref: bigId, cwd: cwdBig, env: bigEnv, api: api() });
      const size = (await stat(bigPath)).size;
      const added = message(bigId, 10_000_000, 2048);
      added.parentId = null;
      await appendEntries(bigPath, [added]);
      const entryBytes = Buffer.byteLength(serializeLine(added) + '\n');
      counter.reset();
      t0 = performance.now();
      const one = await runSync({ mode: 'push', ref: bigId, cwd: cwdBig, env: bigEnv, api: api() });
      const oneMs = ms(t0);
      if (one.pushedEntries !== 1) throw new Error(`expected to push 1 entry, pushed ${one.pushedEntries}`);
      rows.push({
        name: `push after appending one ${entryBytes}-byte entry to a ${(size / MB).toFixed(0)} MB session: bytes sent`,
        value: `${counter.bytes()} B in ${counter.requests()} request(s), ${oneMs.toFixed(0)} ms`,
        baseline: `entry ${entryBytes} B`,
        ratio: counter.bytes() / entryBytes,
        goal: '<= 2x the entry',
        pass: counter.bytes() <= 2 * entryBytes,
      });

      // Last: its 3,000 sessions on the server would make the no-op sync above pull them.
      if (process.env.SESSYNC_BENCH_BIG === '1') rows.push(await bigFirstPush(dir, server, api));
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
    return rows;
  },
};
export default bench;
