// The Claude Code mirror's bookkeeping: per session its mirror file and Claude Code folder, per file what was last read.
import { readJsonOrNull, writeJsonAtomic } from '../store/atomic-json.js';
import { claudeMirrorState } from './claude-paths.js';

export interface MirrorState {
  /** Session id -> its mirror file and the Claude Code project folder its files are in (absolute paths). */
  sessions: Record<string, { mirror: string; folder: string }>;
  /** Claude Code file (absolute) -> size and mtime when it was last mirrored: unchanged files are not read again. */
  files: Record<string, { size: number; mtimeMs: number }>;
  /** Mirror files whose lines could not all be written out yet (a Claude Code file mid-write): tried again next run. */
  pendingExport: string[];
}

export async function loadMirrorState(env: NodeJS.ProcessEnv): Promise<MirrorState> {
  const s = await readJsonOrNull<Partial<MirrorState>>(claudeMirrorState(env));
  return { sessions: s?.sessions ?? {}, files: s?.files ?? {}, pendingExport: s?.pendingExport ?? [] };
}

export async function saveMirrorState(env: NodeJS.ProcessEnv, s: MirrorState): Promise<void> {
  await writeJsonAtomic(claudeMirrorState(env), s);
}
