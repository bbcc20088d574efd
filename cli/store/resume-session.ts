// Opens a session to continue it: migrates an old file on disk first (original kept as .bak), then restores leaf, model and context.
import { buildContext } from '../../shared/context.js';
import type { SessionModel } from '../../shared/context.js';
import { ensureCurrent } from './migrate-file.js';
import type { MigrateResult } from './migrate-file.js';
import { readSession } from './session-reader.js';
import { peekTailState, readTailState } from './tail-state.js';
import { forgetSummary } from './summary-cache.js';

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

export async function resumeSession(path: string): Promise<{ info: ResumeInfo; migrated: MigrateResult | null }> {
  const migrated = await ensureCurrent(path);
  const s = await readSession(path);
  // Resuming means appending next: warm the append cache now (it also gives `list` this file's name and count).
  const before = await peekTailState(path);
  const after = await readTailState(path);
  if (before?.messageCount !== after.messageCount || before?.name !== after.name) await forgetSummary(path);
  const ctx = buildContext(s.tree, { header: s.header });
  const problems: SessionProblem[] = [...s.problems, ...s.tree.problems];
  return {
    info: {
      id: s.header.id,
      path,
      leafId: s.tree.leafId,
      model: ctx.model,
      thinkingLevel: ctx.thinkingLevel,
      messageCount: ctx.messages.length,
      problems,
    },
    migrated,
  };
}
