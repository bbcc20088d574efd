// The Codex mirror's bookkeeping: per session its mirror and rollout, per rollout what was last read, what the server had.
import type { Arrival } from '../../shared/codex-fork.js';
import { readJsonOrNull, writeJsonAtomic } from '../store/atomic-json.js';
import { codexMirrorState } from './codex-paths.js';

export interface CodexState {
  /** Session id -> its mirror file and its rollout (absolute paths). */
  sessions: Record<string, { mirror: string; rollout: string }>;
  /** Rollout (absolute) -> size and mtime when last mirrored: unchanged rollouts are not read again. */
  files: Record<string, { size: number; mtimeMs: number }>;
  /**
   * Session id -> the last line of its rollout here that the server held at the end of a sync: lines up to it reached
   * the server before any continuation pulled later, as this machine saw it (the fork rule's fallback when the server
   * does not say when it received each batch).
   */
  synced: Record<string, string>;
  /** Session id -> the last line of its rollout here as last read or written (becomes `synced` when a sync succeeds). */
  lastLocal: Record<string, string>;
  /** Mirrors whose rollout could not be written yet (Codex writing it, or holding it open): tried again next run. */
  pending: string[];
  /** Mirror (absolute) -> its size and mtime when last written out: a mirror that changed since (a run killed after its
   * pull, before its export) is written out again. */
  exported: Record<string, { size: number; mtimeMs: number }>;
  /** Forks made on this machine, for status: fork id -> what it was forked from and why. */
  forks: Record<string, { from: string; at: string; reason: string; when: string }>;
  /**
   * Session id -> first lines of its continuations -> the batch the server first received each in (codex-arrivals.ts):
   * asked of the server when continuations need ordering, kept because a stored batch's arrival never changes.
   */
  arrivals: Record<string, Record<string, Arrival>>;
  /** Rollout (absolute) -> lines over the entry size limit already reported (their ids): each is told of once. */
  tooBig: Record<string, string[]>;
}

export async function loadCodexState(env: NodeJS.ProcessEnv): Promise<CodexState> {
  const s = await readJsonOrNull<Partial<CodexState>>(codexMirrorState(env));
  return { sessions: s?.sessions ?? {}, files: s?.files ?? {}, synced: s?.synced ?? {}, lastLocal: s?.lastLocal ?? {}, pending: s?.pending ?? [], exported: s?.exported ?? {}, forks: s?.forks ?? {}, arrivals: s?.arrivals ?? {}, tooBig: s?.tooBig ?? {} };
}

export async function saveCodexState(env: NodeJS.ProcessEnv, s: CodexState): Promise<void> {
  await writeJsonAtomic(codexMirrorState(env), s);
}

/** The forks this machine made, newest first, for `status`: which session each came from and why. */
export async function codexForkList(env: NodeJS.ProcessEnv): Promise<{ fork: string; from: string; reason: string; when: string }[]> {
  const s = await loadCodexState(env);
  return Object.entries(s.forks)
    .map(([fork, f]) => ({ fork, from: f.from, reason: f.reason, when: f.when }))
    .sort((a, b) => (a.when < b.when ? 1 : a.when > b.when ? -1 : 0));
}
