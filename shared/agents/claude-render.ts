// How a Claude Code line reads in the share viewer: text, thinking, tool calls and results, summaries, compaction.
// Kept apart from claude-code.ts (no zod, no hashing) because the viewer's script bundles it.
import type { RenderedPart } from './agent.js';

function contentParts(content: unknown, role: 'user' | 'assistant', collapsed: boolean): RenderedPart[] {
  if (typeof content === 'string') return content ? [{ kind: role, text: content, ...(collapsed ? { collapsed } : {}) }] : [];
  if (!Array.isArray(content)) return [];
  const out: RenderedPart[] = [];
  for (const c of content as Record<string, unknown>[]) {
    if (typeof c !== 'object' || c === null) continue;
    if (c.type === 'text' && typeof c.text === 'string') out.push({ kind: role, text: c.text, ...(collapsed ? { collapsed } : {}) });
    else if (c.type === 'thinking' && typeof c.thinking === 'string') out.push({ kind: 'thinking', text: c.thinking, collapsed: true });
    else if (c.type === 'tool_use') out.push({ kind: 'tool_call', text: `${String(c.name ?? 'tool')} ${JSON.stringify(c.input ?? {})}`, collapsed: true });
    else if (c.type === 'tool_result') {
      const r = c.content;
      const text = typeof r === 'string' ? r : Array.isArray(r) ? r.map((x) => (typeof x?.text === 'string' ? x.text : '')).join('\n') : '';
      out.push({ kind: 'tool_result', text, collapsed: true });
    }
  }
  return out;
}

/** The rendered parts of one Claude Code line (its parsed value); [] for lines the viewer does not show. */
export function renderClaudeLine(v: Record<string, unknown>): RenderedPart[] {
  const side = v.isSidechain === true; // a subagent's line: shown collapsed
  if (v.type === 'summary' && typeof v.summary === 'string') return [{ kind: 'summary', text: v.summary }];
  if (v.type === 'system' && v.subtype === 'compact_boundary') return [{ kind: 'system', text: 'conversation compacted' }];
  if (v.type !== 'user' && v.type !== 'assistant') return [];
  const msg = v.message as Record<string, unknown> | undefined;
  if (!msg || typeof msg !== 'object') return [];
  if (v.isCompactSummary === true) return contentParts(msg.content, 'user', true).map((p) => ({ ...p, kind: 'summary' as const }));
  return contentParts(msg.content, v.type, side);
}

/** The parts of a sync or share entry holding an agent's line (type agent_line), or null for any other entry. */
export function renderAgentEntry(entry: Record<string, unknown>): RenderedPart[] | null {
  if (entry.type !== 'agent_line' || entry.agent !== 'claude-code') return null;
  let v: unknown = entry.value;
  if (v === undefined && typeof entry.line === 'string' && entry.whole !== true) {
    try {
      v = JSON.parse(entry.line);
    } catch {
      return [];
    }
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? renderClaudeLine(v as Record<string, unknown>) : [];
}
