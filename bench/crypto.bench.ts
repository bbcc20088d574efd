// End-to-end encryption overhead: first push and first pull of the same sessions to a plaintext and to an encrypted
// account, in the same run (each on its own `sessync serve` process), best of five interleaved rounds each; goal: at most 10% slower.
import { mkdir, open } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bench, BenchRow } from './run.js';
import { startServe } from './serve-process.js';
import { ApiClient } from '../cli/api-client.js';
import { runSync } from '../cli/sync/sync-run.js';
import { projectDir, sessionFileName } from '../cli/store/paths.js';
import { createAccountKey } from '../cli/keys/key-actions.js';
import { saveKey } from '../cli/keys/key-store.js';
import { serializeLine } from '../shared/jsonl.js';
import type { SessionHeader } from '../shared/entry.js';

const MB = 1024 * 1024;
const SESSIONS = 40;
const SESSION_BYTES = 1 * MB;
/** Interleaved rounds per side (SESSYNC_BENCH_CRYPTO_ROUNDS): more of them on a shared machine, where one slow moment decides a best of two. */
const ROUNDS = Number(process.env.SESSYNC_BENCH_CRYPTO_ROUNDS ?? 5);

/** A session of about `bytes` in 1 KiB message entries, chained like a real one. */
async function writeSession(root: string, cwd: string, id: string, bytes: number): Promise<void> {
  const header: SessionHeader = { type: 'session', version: 3, id, timestamp: new Date(Date.UTC(2026, 0, 1)).toISOString(), cwd };
  const dir = projectDir(root, cwd);
  await mkdir(dir, { recursive: true });
  const fh = await open(join(dir, sessionFileName(header.timestamp, id)), 'w');
  let text = serializeLine(header) + '\n';
  for (let i = 0; text.length < bytes; i++) {
    const e = {
      type: 'message',
      id: `${id.slice(0, 8)}-${i.toString(36).padStart(8, '0')}`,
      parentId: i === 0 ? null : `${id.slice(0, 8)}-${(i - 1).toString(36).padStart(8, '0')}`,
      timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      message: { role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `line ${i}: `.padEnd(800, 'lorem ipsum dolor sit amet ') }] },
    };
    text += serializeLine(e as never) + '\n';
  }
  await fh.write(text);
  await fh.close();
}

/** One first push from a laptop and one first pull on a desktop, on a fresh server; times in ms. */
async function round(encrypted: boolean): Promise<{ pushMs: number; pullMs: number; bytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sessync-crypto-bench-'));
  const server = await startServe(join(dir, 'server'));
  try {
    const cwd = join(dir, 'project');
    await mkdir(cwd, { recursive: true });
    const laptop = { SESSYNC_HOME: join(dir, 'laptop') };
    const desktop = { SESSYNC_HOME: join(dir, 'desktop') };
    const account = (await new ApiClient({ url: server.url, token: server.token }).whoami()).account;
    const api = () => new ApiClient({ url: server.url, token: server.token, account });
    if (encrypted) {
      const made = await createAccountKey({ api: api(), account, env: laptop });
      await saveKey(desktop, api().url, account, made.exported);
    }
    for (let i = 0; i < SESSIONS; i++) await writeSession(join(laptop.SESSYNC_HOME, 'sessions'), cwd, `0000${i.toString().padStart(4, '0')}-crypto-bench`, SESSION_BYTES);
    let t0 = performance.now();
    const push = await runSync({ mode: 'push', all: true, cwd, env: laptop, api: api() });
    const pushMs = performance.now() - t0;
    if (push.failed || push.pushedSessions !== SESSIONS) throw new Error(`push: ${push.pushedSessions} pushed, ${push.failed} failed`);
    t0 = performance.now();
    const pull = await runSync({ mode: 'pull', all: true, cwd, env: desktop, api: api() });
    const pullMs = performance.now() - t0;
    if (pull.failed || pull.createdSessions !== SESSIONS) throw new Error(`pull: ${pull.createdSessions} created, ${pull.failed} failed`);
    return { pushMs, pullMs, bytes: push.pushedBytes };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const bench: Bench = {
  title: 'End-to-end encryption: push and pull throughput, encrypted against plaintext',
  async run(): Promise<BenchRow[]> {
    const best = { plain: { pushMs: Infinity, pullMs: Infinity, bytes: 0 }, sealed: { pushMs: Infinity, pullMs: Infinity, bytes: 0 } };
    // Interleaved rounds: a slow moment of a shared machine lands on both sides, and the best of each is compared.
    for (let r = 0; r < ROUNDS; r++) {
      for (const [k, enc] of [['plain', false], ['sealed', true]] as const) {
        const x = await round(enc);
        best[k] = { pushMs: Math.min(best[k].pushMs, x.pushMs), pullMs: Math.min(best[k].pullMs, x.pullMs), bytes: x.bytes };
      }
    }
    const entries = `${SESSIONS} sessions / ${((SESSIONS * SESSION_BYTES) / MB).toFixed(0)} MB`;
    const rate = (ms: number) => `${((SESSIONS * SESSION_BYTES) / MB / (ms / 1000)).toFixed(1)} MB/s (${(ms / 1000).toFixed(2)} s)`;
    const row = (what: string, sealed: number, plain: number): BenchRow => ({
      name: `${what} of ${entries}, encrypted`,
      value: rate(sealed),
      baseline: `plaintext ${rate(plain)}`,
      ratio: sealed / plain,
      goal: '<= 1.10x',
      pass: sealed / plain <= 1.1,
    });
    return [
      row('first push', best.sealed.pushMs, best.plain.pushMs),
      row('first pull', best.sealed.pullMs, best.plain.pullMs),
      { name: 'bytes sent by the push, encrypted', value: `${(best.sealed.bytes / MB).toFixed(1)} MB`, baseline: `plaintext ${(best.plain.bytes / MB).toFixed(1)} MB`, ratio: best.sealed.bytes / best.plain.bytes, goal: 'printed (raw ciphertext: a 28-byte nonce and tag per batch)' },
    ];
  },
};
export default bench;
