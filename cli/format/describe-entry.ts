// One-line human descriptions of entries, for `log`, `tree` and `context`.
import type { SessionEntry } from '../../shared/entry.js';
import { CHECKOUT_CUSTOM_TYPE } from '../../shared/entry.js';
import { shortId } from './short-id.js';

const WIDTH = 72;

export function oneLine(text: string, width = WIDTH): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

/** The readable text of a message's content: strings and text parts, tool calls named. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const p of content) {
    if (typeof p !== 'object' || p === null) continue;
    const part = p as { type?: unknown; text?: unknown; name?: unknown; thinking?: unknown };
    if (part.type === 'text' && typeof part.text === 'string') parts.push(part.text);
    else if (part.type === 'toolCall' && typeof part.name === 'string') parts.push(`[tool ${part.name}]`);
    else if (part.type === 'image') parts.push('[image]');
  }
  return parts.join(' ');
}

export function describeMessage(m: unknown): string {
  if (typeof m !== 'object' || m === null) return 'message';
  const msg = m as { role?: unknown; content?: unknown; summary?: unknown; command?: unknown; output?: unknown; toolName?: unknown };
  const role = typeof msg.role === 'string' ? msg.role : '?';
  if (role === 'compactionSummary' || role === 'branchSummary') return `${role}: ${oneLine(String(msg.summary ?? ''))}`;
  if (role === 'bashExecution') return `bash: ${oneLine(String(msg.command ?? ''))}`;
  if (role === 'toolResult') return `toolResult ${typeof msg.toolName === 'string' ? msg.toolName : ''}: ${oneLine(contentText(msg.content))}`;
  return `${role}: ${oneLine(contentText(msg.content))}`;
}

export function describeEntry(e: SessionEntry): string {
  switch (e.type) {
    case 'message':
      return describeMessage(e.message);
    case 'model_change':
      return `model -> ${String(e.provider)}/${String(e.modelId)}`;
    case 'thinking_level_change':
      return `thinking -> ${String(e.thinkingLevel)}`;
    case 'compaction':
      return `compaction (keeps from ${shortId(String(e.firstKeptEntryId))}): ${oneLine(String(e.summary), 50)}`;
    case 'branch_summary':
      return `branch summary (from ${shortId(String(e.fromId))}): ${oneLine(String(e.summary), 50)}`;
    case 'custom': {
      const data = e.data as { targetId?: unknown } | undefined;
      if (e.customType === CHECKOUT_CUSTOM_TYPE && typeof data?.targetId === 'string') return `checkout of ${shortId(data.targetId)}`;
      return `custom ${String(e.customType)}`;
    }
    case 'custom_message':
      return `custom message ${String(e.customType)}: ${oneLine(contentText(e.content), 50)}`;
    case 'label':
      return e.label === undefined ? `label removed from ${shortId(String(e.targetId))}` : `label ${shortId(String(e.targetId))}: ${String(e.label)}`;
    case 'session_info':
      return `name: ${String(e.name ?? '')}`;
    default:
      return `${e.type} (unknown type, kept as is)`;
  }
}

let today = '';
let todayAt = 0;
function todayUtc(): string {
  const n = Date.now();
  if (n - todayAt > 1_000) {
    today = new Date(n).toISOString().slice(0, 10);
    todayAt = n;
  }
  return today;
}

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** HH:MM:SS of a timestamp in UTC (the date too when it is not today). Called once per line of a tree: kept cheap. */
export function shortTime(iso: string): string {
  let norm = iso;
  if (!ISO_UTC.test(iso)) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    norm = d.toISOString();
  }
  const day = norm.slice(0, 10);
  const time = norm.slice(11, 19);
  return day === todayUtc() ? time : `${day} ${time}`;
}

/** Current label per target id (the latest label entry wins; a label entry without text removes it). */
export function labelsOf(entries: readonly SessionEntry[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of entries) {
    if (e.type !== 'label' || typeof e.targetId !== 'string') continue;
    if (typeof e.label === 'string' && e.label !== '') out.set(e.targetId, e.label);
    else out.delete(e.targetId);
  }
  return out;
}
