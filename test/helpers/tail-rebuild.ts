// A file's tail state as a rebuild from its bytes finds it, and a form of a state that compares by content.
import { copyFileSync, rmSync } from 'node:fs';
import { readTailState, type TailState } from '../../cli/store/tail-state.js';

/** A rebuild from the bytes: a copy of the file has no cache to start from. */
export async function rebuiltTailState(file: string): Promise<TailState> {
  const copy = `${file}.copy.jsonl`;
  copyFileSync(file, copy);
  const s = await readTailState(copy);
  rmSync(copy);
  return s;
}

/** Path and mtime aside (a copy differs in both), tips as a plain object and pending in any order. */
export const comparableTailState = (s: TailState) => ({ ...s, path: '', mtimeMs: 0, tips: { ...s.tips }, pending: [...s.pending].sort() });
