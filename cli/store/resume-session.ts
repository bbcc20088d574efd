// Opens a session to continue it: migrates an old file on disk first (original kept as .bak), then restores leaf, model and context.
import type { SessionModel } from '../../shared/context.js';
import { ensureCurrent } from './migrate-file.js';
import type { MigrateResult } from './migrate-file.js';
import { openSessionView } from './session-file-index-open.js';
import { peekTailState, readTailState, saveTailState } from './tail-state.js';
import { forgetSummary } from './summary-cache.js';
import { saveCache } from './cache-save.js';

export type SessionProblem = { line: number; reason: string } | { entryId: string; reason: string };

export interface ResumeInfo {
  id: string;
  path: string;
  leafId: string | null;
  model: SessionModel | null;
  thinkingLevel: string | null;
  /** Messages the context projection sends to the model on the active branch. */
  messageCount: number;
  problems: SessionProblem[];
}

export async function resumeSession(path: string, env: NodeJS.ProcessEnv = process.env): Promise<{ info: ResumeInfo; migrated: MigrateResult | null }> {
  const migrated = await ensureCurrent(path, env);
  // From the session's index: the active branch and only the entries that decide model and thinking level are read
  // (the messages are counted, not read), so a first open keeps nothing of what it parses to build the index.
  // A rebuilt index is written after the answer (before the process exits).
  const s = await openSessionView(path, { keep: false, defer: true, env });
  // Resuming means appending next: warm the append cache now (it also gives `list` this file's name and count).
  const before = await peekTailState(path, env);
  const idx = s.index;
  let after;
  if (idx && !(before && before.size === idx.size && before.mtimeMs === idx.mtimeMs)) {
    // A cold or outdated cache would re-read every byte appended since it was saved: the index already knows them.
    after = (await s.tailState()) ?? (await readTailState(path, env));
    await saveCache('append', saveTailState(after, env));
  } else {
    after = await readTailState(path, env);
  }
  if (before?.messageCount !== after.messageCount || before?.name !== after.name) await forgetSummary(path, env);
  const ctx = await s.contextInfo();
  const problems: SessionProblem[] = [...s.problems, ...s.treeProblems];
  return {
    info: {
      id: s.header.id,
      path,
      leafId: s.leafId,
      model: ctx.model,
      thinkingLevel: ctx.thinkingLevel,
      messageCount: ctx.messageCount,
      problems,
    },
    migrated,
  };
}
