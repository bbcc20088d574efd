// CLI local store speed: list over 10,000 sessions vs reading them whole and over a 3,000-session / 5 GB store; append cost at 1,000 vs 100,000 entries; startup.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeSync } from 'node:fs';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bench, BenchRow } from './run.js';
import { CURRENT_VERSION } from '../shared/entry.js';
import type { SessionEntry } from '../shared/entry.js';
import { newId } from '../shared/ids.js';
import { parseSession, serializeLine } from '../shared/jsonl.js';
import { projectDir, sessionFileName } from '../cli/store/paths.js';
import { listSessions } from '../cli/store/session-index.js';
import { appendEntries } from '../cli/store/session-writer.js';
import { readTailState } from '../cli/store/tail-state.js';

const SESSIONS = 10_000;
// ~2 KB per entry on average, like the pi fixtures (2.4 KB per line): about 150 KB per session, 1.5 GB in all.
const ENTRIES_PER_SESSION = 75;
const APPENDS = 200;
const REPO = fileURLToPath(new URL('..', import.meta.url));

const now = () => performance.now();
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 1 ? `${ms.toFixed(1)} ms` : `${(ms * 1000).toFixed(0)} µs`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const WORDS = 'const let function return import export await async session entry parent tree branch leaf context model tool result error file path read write append'.split(' ');
const words = (n: number, seed: number) => Array.from({ length: n }, (_, k) => WORDS[(seed * 31 + k * 7) % WORDS.length]).join(' ');

/** pi-like turns: a user prompt, an assistant reply with a tool call, a tool result with output (the bulk of real sessions). */
function entry(parentId: string | null, i: number, ts: number): SessionEntry {
  const base = { type: 'message', id: newId(), parentId, timestamp: new Date(ts).toISOString() };
  switch (i % 3) {
    case 0:
      return { ...base, message: { role: 'user', content: [{ type: 'text', text: words(40, i) }] } };
    case 1:
      return {
        ...base,
        message: {
          role: 'assistant',
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          content: [{ type: 'text', text: words(120, i) }, { type: 'toolCall', id: `t${i}`, name: 'bash', arguments: { command: 'npm test' } }],
          usage: { input: 1200, output: 300 },
          stopReason: 'toolUse',
        },
      };
    default:
      return { ...base, message: { role: 'toolResult', toolCallId: `t${i - 1}`, toolName: 'bash', isError: false, content: [{ type: 'text', text: words(700, i) }] } };
  }
}

/** Writes a linear session of n entries directly (generation is not what is measured). */
function writeSession(path: string, cwd: string, n: number): void {
  const t0 = Date.UTC(2026, 0, 1);
  const fd = openSync(path, 'w');
  let buf = serializeLine({ type: 'session', version: CURRENT_VERSION, id: newId(), timestamp: new Date(t0).toISOString(), cwd }) + '\n';
  let parent: string | null = null;
  for (let i = 0; i < n; i++) {
    const e = entry(parent, i, t0 + i);
    parent = e.id;
    buf += serializeLine(e) + '\n';
    if (buf.length > 1 << 20) {
      writeSync(fd, buf);
      buf = '';
    }
  }
  writeSync(fd, buf);
  closeSync(fd);
}

async function listBench(dir: string): Promise<BenchRow[]> {
  const env = { SESSYNC_HOME: join(dir, 'home') }; // the run's home: its caches go there
  const root = join(dir, 'home', 'sessions');
  const cwd = '/bench/project';
  const pdir = projectDir(root, cwd);
  mkdirSync(pdir, { recursive: true });
  let bytes = 0;
  for (let i = 0; i < SESSIONS; i++) {
    const p = join(pdir, sessionFileName(new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), newId()));
    writeSession(p, cwd, ENTRIES_PER_SESSION);
    if (i === 0) bytes = readFileSync(p).length;
  }
  spawnSync('sync'); // let the generated files' writeback finish so it does not land inside either measurement
  // Baseline: what a lister without a header index does (pi): read and parse every file whole.
  const whole = now();
  let count = 0;
  for (const name of readdirSync(pdir)) count += parseSession(readFileSync(join(pdir, name), 'utf8')).entries.length > 0 ? 1 : 0;
  const wholeMs = now() - whole;
  const cold = now();
  const first = await listSessions({ root, realCwd: cwd, env });
  const coldMs = now() - cold;
  const warmRuns: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = now();
    const rows = await listSessions({ root, realCwd: cwd, env });
    warmRuns.push(now() - t);
    if (rows.length !== SESSIONS) throw new Error(`list found ${rows.length} of ${SESSIONS}`);
  }
  if (first.length !== SESSIONS || count !== SESSIONS) throw new Error('bench setup: wrong session count');
  const warmMs = median(warmRuns);
  const note = `${SESSIONS} files of ~${Math.round(bytes / 1024)} KiB`;
  return [
    { name: `list, first run (headers only, cache empty), ${note}`, value: fmt(coldMs), baseline: `${fmt(wholeMs)} read+parse whole`, ratio: wholeMs / coldMs },
    {
      name: `list, summary cache warm (size+mtime checked per file), ${note}`,
      value: fmt(warmMs),
      baseline: `${fmt(wholeMs)} read+parse whole`,
      ratio: wholeMs / warmMs,
      goal: '>= 50x',
      pass: wholeMs / warmMs >= 50,
    },
  ];
}

/** The heavy store of the goal: 3,000 sessions, 5 GB (SESSYNC_BENCH_LIST_GB sets the size, so a CI-like run can take less). */
const BIG_SESSIONS = 3_000;
const BIG_BYTES = (Number(process.env.SESSYNC_BENCH_LIST_GB) || 5) * 1024 ** 3;

/**
 * Runs fn while counting the bytes node:fs hands back to its reads (sync and promise ones), to show what a cold list
 * reads per file. Counted at node:fs rather than /proc/self/io: the module loader's thread reads in the same process.
 */
async function countingReads<T>(fn: () => Promise<T>): Promise<{ value: T; bytes: number }> {
  let bytes = 0;
  const size = (r: unknown) => (typeof r === 'number' ? r : typeof r === 'string' ? Buffer.byteLength(r) : Buffer.isBuffer(r) ? r.length : 0);
  const saved: [Record<string, unknown>, string, unknown][] = [];
  for (const [mod, name] of [[fs, 'readSync'], [fs, 'readFileSync'], [fsp, 'readFile']] as const) {
    const m = mod as unknown as Record<string, (...a: unknown[]) => unknown>;
    const orig = m[name]!;
    saved.push([m, name, orig]);
    m[name] = function (this: unknown, ...a: unknown[]) {
      const r = orig.apply(this, a);
      if (r instanceof Promise) return r.then((v) => ((bytes += size(v)), v));
      bytes += size(r);
      return r;
    };
  }
  syncBuiltinESMExports();
  try {
    return { value: await fn(), bytes };
  } finally {
    for (const [m, name, orig] of saved) m[name] = orig;
    syncBuiltinESMExports();
  }
}

/** One session body of about `bytes`, ending in an assistant reply (where a pi turn ends), written into every file after its own header. */
function sessionBody(bytes: number, t0: number): Buffer {
  let text = '';
  let parent: string | null = null;
  for (let i = 0; text.length < bytes || i % 3 !== 2; i++) {
    const e = entry(parent, i, t0 + i);
    parent = e.id;
    text += serializeLine(e) + '\n';
  }
  return Buffer.from(text);
}

async function bigListBench(dir: string): Promise<BenchRow[]> {
  const env = { SESSYNC_HOME: join(dir, 'home') }; // the run's home: its caches go there
  const root = join(dir, 'home', 'sessions');
  const cwd = '/bench/big-project';
  const pdir = projectDir(root, cwd);
  mkdirSync(pdir, { recursive: true });
  const t0 = Date.UTC(2026, 0, 1);
  const body = sessionBody(BIG_BYTES / BIG_SESSIONS, t0);
  let total = 0;
  for (let i = 0; i < BIG_SESSIONS; i++) {
    const ts = new Date(t0 + i * 1000).toISOString();
    const fd = openSync(join(pdir, sessionFileName(ts, newId())), 'w');
    total += writeSync(fd, serializeLine({ type: 'session', version: CURRENT_VERSION, id: newId(), timestamp: ts, cwd }) + '\n');
    total += writeSync(fd, body);
    closeSync(fd);
  }
  spawnSync('sync');
  const c = now();
  const first = await listSessions({ root, realCwd: cwd, env });
  const coldMs = now() - c;
  // A second cold list (summary cache removed), counting its reads: the counting itself would slow the timed one.
  rmSync(join(dir, 'home', 'cache', 'list'), { recursive: true, force: true });
  const counted = await countingReads(() => listSessions({ root, realCwd: cwd, env }));
  const perFile = counted.bytes / BIG_SESSIONS;
  if (counted.value.length !== BIG_SESSIONS) throw new Error('second cold list: wrong session count');
  if (first.length !== BIG_SESSIONS) throw new Error(`list found ${first.length} of ${BIG_SESSIONS}`);
  const warm: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = now();
    await listSessions({ root, realCwd: cwd, env });
    warm.push(now() - t);
  }
  const w = median(warm);
  const note = `${BIG_SESSIONS.toLocaleString('en')} files, ${(total / 1024 ** 3).toFixed(1)} GB`;
  return [
    { name: `list, cold (no summary cache), ${note}`, value: fmt(coldMs), goal: '<= 300 ms', pass: coldMs <= 300 },
    { name: `list, cold: bytes read per file (counted at node:fs)`, value: `${perFile.toFixed(1)} B`, goal: '<= 4,096 B', pass: perFile <= 4096 },
    { name: `list, warm (summary cache), ${note}, median of 3`, value: fmt(w), goal: '<= 50 ms', pass: w <= 50 },
  ];
}

async function appendBench(dir: string): Promise<BenchRow[]> {
  mkdirSync(dir, { recursive: true });
  const env = { SESSYNC_HOME: join(dir, 'home') }; // the run's home: its caches go there
  const small = join(dir, 'small.jsonl');
  const big = join(dir, 'big.jsonl');
  writeSession(small, '/bench', 1_000);
  writeSession(big, '/bench', 100_000);
  const leaf = { [small]: (await readTailState(small, env)).leafId, [big]: (await readTailState(big, env)).leafId };
  const per: Record<string, number[]> = { [small]: [], [big]: [] };
  // Interleaved so that machine noise hits both files alike; each call takes the lock, reads the cache, writes, fsyncs.
  for (let i = 0; i < APPENDS; i++) {
    for (const p of [small, big]) {
      const e = entry(leaf[p]!, i, Date.now());
      const t = now();
      await appendEntries(p, [e], { env });
      per[p]!.push(now() - t);
      leaf[p] = e.id;
    }
  }
  const s = median(per[small]!);
  const b = median(per[big]!);
  return [
    {
      name: `appendEntries, one entry per call (median of ${APPENDS}), 100,000-entry file vs 1,000-entry file`,
      value: fmt(b),
      baseline: fmt(s),
      ratio: b / s,
      goal: '<= 1.5x',
      pass: b / s <= 1.5,
    },
  ];
}

function startupBench(): BenchRow[] {
  const run = (args: string[]) => {
    const t = now();
    const r = spawnSync(process.execPath, args, { cwd: REPO, env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } });
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
    return now() - t;
  };
  run(['cli/bin.mjs', 'version']); // warm-up run (dist/ is built by `npm run bench` first)
  const bare: number[] = [];
  const cli: number[] = [];
  for (let i = 0; i < 7; i++) {
    bare.push(run(['-e', '0']));
    cli.push(run(['cli/bin.mjs', 'version']));
  }
  const c = median(cli);
  return [{ name: '`sessync version` (no-op) wall time, median of 7', value: fmt(c), baseline: `${fmt(median(bare))} bare node`, goal: '< 300 ms', pass: c < 300 }];
}

const bench: Bench = {
  title: 'CLI local store',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'sessync-cli-bench-'));
    try {
      const list = await listBench(join(dir, 'list'));
      rmSync(join(dir, 'list'), { recursive: true, force: true }); // room for the 5 GB store
      return [...list, ...(await bigListBench(join(dir, 'big-list'))), ...(await appendBench(join(dir, 'append'))), ...startupBench()];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
export default bench;
