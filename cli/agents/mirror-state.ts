// The Claude Code mirror's bookkeeping: per session its mirror file and Claude Code folder, per file what was last read.
import { readJsonOrNull, writeJsonAtomic } from '../store/atomic-json.js';
import { claudeMirrorState } from './claude-paths.js';

/** A Claude Code file as last mirrored. */
export interface FileMark {
  size: number;
  mtimeMs: number;
  /** End of the last complete line read: the next read starts here. Absent: read it whole (state of an older sessync). */
  offset?: number;
  /** Hash of the bytes just before `offset`: a file rewritten below it is noticed and read whole again. */
  tail?: string | null;
}

export interface MirrorState {
  /**
   * Session id -> its mirror file and the Claude Code project folder its files are in (absolute paths). `mirrorSize`:
   * the mirror's size after sessync last wrote it; when it differs (a pull wrote there since), lines read next are
   * checked against the mirror's ids before they are added.
   */
  sessions: Record<string, { mirror: string; folder: string; mirrorSize?: number }>;
  /** Claude Code file (absolute) -> what was last mirrored of it: unchanged files are not read, grown ones from their offset. */
  files: Record<string, FileMark>;
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
