// The context projection: the active branch turned into what an LLM is sent (messages, model, thinking level), as pi does it.
import type { SessionEntry, SessionHeader } from './entry.js';
import type { SessionTree } from './tree.js';

export interface SessionModel {
  provider: string;
  modelId: string;
}

/** pi's thinking level when nothing on the branch (or in a v1 header) sets one. */
export const DEFAULT_THINKING_LEVEL = 'off';

export interface SessionContext {
  model: SessionModel | null;
  thinkingLevel: string;
  messages: unknown[];
}

/** Message made from a compaction: stands for everything before firstKeptEntryId. */
export interface CompactionSummaryMessage {
  role: 'compactionSummary';
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

export interface BranchSummaryMessage {
  role: 'branchSummary';
  summary: string;
  fromId: string;
  timestamp: number;
}

/** A custom_message entry as the message pi puts in context. */
export interface CustomMessage {
  role: 'custom';
  customType: string;
  content: unknown;
  display: boolean;
  details: unknown;
  timestamp: number;
}

/**
 * Projects the branch ending at opts.leafId (default: the tree's leaf):
 * - message: in (its `message` object, unchanged);
 * - custom_message: in, as a role "custom" message; branch_summary: in, as a role "branchSummary" message;
 * - model_change / thinking_level_change: never in; they set model / thinking level;
 * - custom, label, session_info, unknown types: never in;
 * - the latest compaction on the branch: one role "compactionSummary" message, then the entries
 *   from its firstKeptEntryId up to the compaction, then the entries after it.
 * Model: the latest model_change or assistant message (provider/model) on the branch, as pi does;
 * else the header's provider/modelId (kept there when a v1 file is migrated). Thinking level: the
 * latest thinking_level_change, else the header's thinkingLevel, else "off" (pi's default).
 */
export function buildContext(
  tree: SessionTree,
  opts: { leafId?: string; header?: SessionHeader | null } = {},
): SessionContext {
  return contextOfBranch(tree.branch(opts.leafId), opts.header);
}

/**
 * buildContext on a branch given root to leaf. A reader that loads only part of a branch passes the entries
 * the projection reads (the latest compaction and its first kept entry, the latest model and thinking-level
 * sources, and what it puts in context) in branch order; any other entry may be left out or passed with type '' and gives the same result.
 */
export function contextOfBranch(path: readonly SessionEntry[], header?: SessionHeader | null): SessionContext {
  let model: SessionModel | null = null;
  let thinkingLevel: string | null = null;
  let compactionAt = -1;

  for (let i = 0; i < path.length; i++) {
    const e = path[i]!;
    switch (e.type) {
      case 'thinking_level_change':
        thinkingLevel = e.thinkingLevel as string;
        break;
      case 'model_change':
        model = { provider: e.provider as string, modelId: e.modelId as string };
        break;
      case 'message': {
        const m = e.message as { role: string; provider?: unknown; model?: unknown };
        if (m.role === 'assistant' && typeof m.provider === 'string' && typeof m.model === 'string') {
          model = { provider: m.provider, modelId: m.model };
        }
        break;
      }
      case 'compaction':
        compactionAt = i;
        break;
    }
  }

  if (model === null && header && typeof header.provider === 'string' && typeof header.modelId === 'string') {
    model = { provider: header.provider, modelId: header.modelId };
  }
  if (thinkingLevel === null && header && typeof header.thinkingLevel === 'string') thinkingLevel = header.thinkingLevel;

  const messages: unknown[] = [];
  if (compactionAt < 0) {
    for (const e of path) appendMessage(messages, e);
  } else {
    const c = path[compactionAt]!;
    messages.push({
      role: 'compactionSummary',
      summary: c.summary as string,
      tokensBefore: typeof c.tokensBefore === 'number' ? c.tokensBefore : 0,
      timestamp: Date.parse(c.timestamp),
    } satisfies CompactionSummaryMessage);
    // Kept entries: from firstKeptEntryId (if it is on this branch before the compaction) to the compaction.
    let kept = false;
    for (let i = 0; i < compactionAt; i++) {
      const e = path[i]!;
      if (!kept && e.id === c.firstKeptEntryId) kept = true;
      if (kept) appendMessage(messages, e);
    }
    for (let i = compactionAt + 1; i < path.length; i++) appendMessage(messages, path[i]!);
  }
  return { model, thinkingLevel: thinkingLevel ?? DEFAULT_THINKING_LEVEL, messages };
}

function appendMessage(out: unknown[], e: SessionEntry): void {
  switch (e.type) {
    case 'message':
      out.push(e.message);
      return;
    case 'custom_message':
      out.push({
        role: 'custom',
        customType: e.customType as string,
        content: e.content,
        display: e.display as boolean, // as written (pi passes it through)
        details: e.details,
        timestamp: Date.parse(e.timestamp),
      } satisfies CustomMessage);
      return;
    case 'branch_summary':
      // pi skips an empty summary.
      if (typeof e.summary === 'string' && e.summary !== '') {
        out.push({
          role: 'branchSummary',
          summary: e.summary,
          fromId: typeof e.fromId === 'string' ? e.fromId : '',
          timestamp: Date.parse(e.timestamp),
        } satisfies BranchSummaryMessage);
      }
      return;
  }
}
