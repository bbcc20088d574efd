// Machines for Codex sync tests: a sessync home, a CODEX_HOME and a project, all in a temp root.
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { codex } from '../../shared/agents/codex.js';
import { Machine, type TestServer } from '../sync/helpers.js';

export class CodexMachine extends Machine {
  readonly codexHome: string;
  /** HOME for the codex process (not sessync's). */
  readonly userHome: string;

  constructor(root: string, name: string, opts: { remote?: string; project?: string } = {}) {
    const codexHome = join(root, name, 'codex');
    super(root, name, { ...opts, env: { CODEX_HOME: codexHome, SESSYNC_AGENT: 'codex' } });
    this.codexHome = codexHome;
    this.userHome = join(root, name, 'user-home');
    mkdirSync(join(codexHome, 'sessions'), { recursive: true });
    mkdirSync(this.userHome, { recursive: true });
  }

  get sessionsDir(): string {
    return join(this.codexHome, 'sessions');
  }

  /** Every rollout here, relative to sessions/. */
  rollouts(): string[] {
    return (readdirSync(this.sessionsDir, { recursive: true }) as string[]).filter((f) => /rollout-.*\.jsonl$/.test(f)).sort();
  }

  /** The one rollout of `session` here (absolute). */
  rolloutOf(session: string): string {
    const f = this.rollouts().filter((r) => r.endsWith(`-${session}.jsonl`));
    if (f.length !== 1) throw new Error(`expected one rollout of ${session} in ${this.sessionsDir}, found ${f.length}`);
    return join(this.sessionsDir, f[0]!);
  }

  text(session: string): string {
    return readFileSync(this.rolloutOf(session), 'utf8');
  }
}

const L = (o: object) => JSON.stringify(o);
/** A user message line as Codex writes it. */
export const msg = (t: string, ts: string) => L({ timestamp: ts, type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: t }] } });
export const lines = (...ls: string[]) => ls.map((l) => `${l}\n`).join('');

let n = 0;
/** A session id of the test's own (uuid-shaped), new on each call. */
export function newId(): string {
  n++;
  return `01a20000-0000-7000-8000-${String(n).padStart(12, '0')}`;
}

/** Writes a new rollout of `id` on `m` as Codex names it, with a session_meta naming m's project. */
export function startRollout(m: CodexMachine, id: string, ...rest: string[]): string {
  const ts = '2026-01-01T00:00:00.000Z';
  const path = join(m.sessionsDir, codex.mainFile(id, ts));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lines(L({ timestamp: ts, type: 'session_meta', payload: { id, timestamp: ts, cwd: m.project, originator: 'codex_exec' } }), ...rest));
  return path;
}

/** Two logged-in machines with a project of their own (the server is shared, and B pulls every session of its project). */
export async function codexPair(root: string, name: string, server: TestServer): Promise<{ a: CodexMachine; b: CodexMachine }> {
  const remote = `git@github.com:Acme/${name}.git`;
  const a = new CodexMachine(root, `${name}-a`, { remote });
  const b = new CodexMachine(root, `${name}-b`, { remote });
  await a.login(server);
  await b.login(server);
  return { a, b };
}

/**
 * Syncs `order` once each, then every machine until none moves an entry; then every machine holds exactly the rollouts
 * of `id` and `fork`, with the same names and bytes as the first machine's.
 */
export async function convergeToOneFork(order: CodexMachine[], id: string, fork: string): Promise<void> {
  const all = [...new Set(order)];
  for (const m of order) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
  for (const m of all) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });
  const [first, ...rest] = all as [CodexMachine, ...CodexMachine[]];
  const names = (m: CodexMachine) => m.rollouts().map((r) => r.split('/').pop());
  expect(first.rollouts().map((r) => codex.sessionOf(r)).sort()).toEqual([id, fork].sort());
  for (const m of rest) {
    expect(names(m)).toEqual(names(first));
    expect(m.text(id)).toBe(first.text(id));
    expect(m.text(fork)).toBe(first.text(fork));
  }
}

/**
 * A session made on A and synced to B; then both continue it offline, B's line written earlier (its time), A's later,
 * and both push, A's first: the race. Returns the session and each machine's rollout as it was then.
 */
export async function raced(a: CodexMachine, b: CodexMachine): Promise<{ id: string; aOwn: string; bOwn: string }> {
  const id = newId();
  startRollout(a, id, msg('first', '2026-01-01T00:00:01.000Z'));
  await a.ok(['sync', '--json']);
  await b.ok(['sync', '--json']);
  expect(b.text(id)).toBe(a.text(id));
  appendFileSync(b.rolloutOf(id), lines(msg('third on B', '2026-01-01T09:00:00.000Z')));
  appendFileSync(a.rolloutOf(id), lines(msg('third on A', '2026-01-01T10:00:00.000Z')));
  const own = { id, aOwn: a.text(id), bOwn: b.text(id) };
  expect(await a.ok(['push', '--json'])).toMatchObject({ failed: 0, pushedEntries: 1 });
  expect(await b.ok(['push', '--json'])).toMatchObject({ failed: 0, pushedEntries: 1 });
  return own;
}

/** The fork B's sync says its own work continues as. */
export async function bMovesToFork(b: CodexMachine, id: string): Promise<string> {
  const r = await b.run(['sync']);
  expect(r.code, r.stderr).toBe(0);
  const told = new RegExp(`your work on this machine in session ${id} continues as session ([0-9a-f-]{36})`).exec(r.stderr);
  expect(told, r.stderr).not.toBeNull();
  return told![1]!;
}
