// Claude Code mirror: a sync after one line appended to one of 1,000 sessions reads that line, not the session.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bench, BenchRow } from './run.js';
import { claudeProjectFolder } from '../shared/agents/claude-code.js';
import { importClaude } from '../cli/agents/claude-import.js';
import { loadMirrorState, saveMirrorState, type MirrorState } from '../cli/agents/mirror-state.js';

const SESSIONS = 1_000;
// ~1.5 KB per line, 60 lines: about 90 KB per session (real ones often hold megabytes), 90 MB in all.
const LINES = 60;
const RUNS = 9;
const CWD = '/home/me/code/app';

const now = () => performance.now();
const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);
const kb = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sessionId = (s: number) => `5e551000-0000-4000-8000-${String(s).padStart(12, '0')}`;
const uuid = (s: number, i: number) => `${String(s).padStart(8, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** A Claude Code line as the CLI writes it: user and assistant turns with the bulk in the messages. */
function line(s: number, i: number): string {
  const base = { parentUuid: i === 0 ? null : uuid(s, i - 1), isSidechain: false, cwd: CWD, sessionId: sessionId(s), version: '2.1.38', uuid: uuid(s, i), timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() };
  const text = `step ${i}: ${'read the file, change the function, run the tests again '.repeat(24)}`;
  const v = i % 2 === 0 ? { ...base, type: 'user', message: { role: 'user', content: text } } : { ...base, type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] } };
  return JSON.stringify(v) + '\n';
}

async function refresh(env: NodeJS.ProcessEnv, forget?: (s: MirrorState) => void): Promise<{ ms: number; bytes: number; lines: number }> {
  const state = await loadMirrorState(env);
  forget?.(state);
  const t = now();
  const r = await importClaude(env, state, () => undefined);
  await saveMirrorState(env, state);
  return { ms: now() - t, bytes: r.bytesRead, lines: r.lines };
}

const bench: Bench = {
  title: 'Claude Code mirror',
  async run(): Promise<BenchRow[]> {
    const dir = mkdtempSync(join(tmpdir(), 'sessync-bench-agents-'));
    try {
      const env: NodeJS.ProcessEnv = { HOME: dir, SESSYNC_HOME: join(dir, 'home'), CLAUDE_CONFIG_DIR: join(dir, 'claude') };
      const folder = join(dir, 'claude', 'projects', claudeProjectFolder(CWD));
      mkdirSync(folder, { recursive: true });
      for (let s = 0; s < SESSIONS; s++) {
        let text = '';
        for (let i = 0; i < LINES; i++) text += line(s, i);
        writeFileSync(join(folder, `${sessionId(s)}.jsonl`), text);
      }
      const first = await refresh(env);
      const file = (s: number) => join(folder, `${sessionId(s)}.jsonl`);
      const inc: { ms: number; bytes: number }[] = [];
      const full: { ms: number; bytes: number }[] = [];
      const incremental = async (k: number) => {
        appendFileSync(file(k), line(k, LINES + k));
        const a = await refresh(env);
        if (a.lines !== 1) throw new Error(`expected 1 line mirrored, got ${a.lines}`);
        inc.push(a);
      };
      // The whole re-read, as before: the same change, read without the offset (state of an older sessync).
      const whole = async (k: number) => {
        const s = SESSIONS - 1 - k;
        appendFileSync(file(s), line(s, LINES + k));
        const b = await refresh(env, (st) => delete st.files[file(s)]!.offset);
        if (b.lines !== 1) throw new Error(`expected 1 line mirrored, got ${b.lines}`);
        full.push(b);
      };
      // Alternating which goes first, so neither gains from the other warming the caches.
      for (let k = 0; k < RUNS; k++) {
        if (k % 2 === 0) {
          await incremental(k);
          await whole(k);
        } else {
          await whole(k);
          await incremental(k);
        }
      }
      const ib = median(inc.map((x) => x.bytes));
      const fb = median(full.map((x) => x.bytes));
      const it = median(inc.map((x) => x.ms));
      const ft = median(full.map((x) => x.ms));
      return [
        { name: `first mirror of ${SESSIONS} sessions (${LINES} lines each)`, value: `${fmt(first.ms)}, ${kb(first.bytes)} read` },
        { name: `mirror refresh after 1 line appended to 1 of ${SESSIONS}: bytes read, median of ${RUNS}`, value: kb(ib), baseline: `${kb(fb)} whole re-read`, ratio: fb / ib, goal: '>= 10x less', pass: fb / ib >= 10 },
        { name: `the same: time, median of ${RUNS}`, value: fmt(it), baseline: `${fmt(ft)} whole re-read`, ratio: ft / it },
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
