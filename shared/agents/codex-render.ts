// How a Codex CLI rollout line reads in the share viewer, and which of its values redaction must scan.
// Kept apart from the adapter (no zod, no hashing) because the viewer's script bundles it.
import type { RenderedPart } from './agent.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Text Codex injects as a user message (environment, AGENTS.md, skills): context, not what the user typed. */
const INJECTED_RE = /^\s*(?:<environment_context>|<user_instructions>|<INSTRUCTIONS>|# AGENTS\.md instructions|<skill>|<turn_aborted>)/;

/** The texts of a message's content items (input_text, output_text, text); an image becomes a placeholder. */
function contentTexts(content: unknown): string[] {
  if (typeof content === 'string') return content ? [content] : [];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const c of content) {
    if (!isObj(c)) continue;
    if (typeof c.text === 'string' && c.text !== '') out.push(c.text);
    else if (c.type === 'input_image') out.push('[image]');
  }
  return out;
}

/** A tool's output: a string, {content: string | items}, or a list of content items. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return contentTexts(output).join('\n');
  if (isObj(output)) {
    if (output.content !== undefined) return typeof output.content === 'string' ? output.content : contentTexts(output.content).join('\n');
    return JSON.stringify(output);
  }
  return '';
}

/** A user message holding only context Codex injects (no text the user typed, no image): not a message of theirs. */
export function onlyInjected(content: unknown): boolean {
  const texts = contentTexts(content);
  return texts.length > 0 && texts.every((t) => INJECTED_RE.test(t));
}

function messageParts(p: Obj): RenderedPart[] {
  const texts = contentTexts(p.content);
  if (p.role === 'assistant') return texts.map((text) => ({ kind: 'assistant', text }));
  // Developer messages are Codex's own instructions (permissions, collaboration mode): long and the same in every
  // session, so they show collapsed as system text; so does the context Codex injects as a user message.
  if (p.role === 'developer' || p.role === 'system') return texts.map((text) => ({ kind: 'system', text, collapsed: true }));
  return texts.map((text) => (INJECTED_RE.test(text) ? { kind: 'system', text, collapsed: true } : { kind: 'user', text }));
}

function reasoningParts(p: Obj): RenderedPart[] {
  const texts = [...(Array.isArray(p.summary) ? contentTexts(p.summary) : []), ...(Array.isArray(p.content) ? contentTexts(p.content) : [])];
  if (texts.length > 0) return texts.map((text) => ({ kind: 'thinking', text, collapsed: true }));
  // The model's reasoning travels encrypted for the provider only: nothing of it can be shown, but that it happened can.
  if (typeof p.encrypted_content === 'string') return [{ kind: 'thinking', text: '[encrypted reasoning]', collapsed: true }];
  return [];
}

function responseItemParts(p: Obj): RenderedPart[] {
  switch (p.type) {
    case 'message':
      return messageParts(p);
    case 'reasoning':
      return reasoningParts(p);
    case 'function_call':
      return [{ kind: 'tool_call', text: `${str(p.name) || 'tool'} ${str(p.arguments)}`, collapsed: true }];
    case 'custom_tool_call':
      return [{ kind: 'tool_call', text: `${str(p.name) || 'tool'}\n${str(p.input)}`, collapsed: true }];
    case 'local_shell_call': {
      const a = isObj(p.action) ? p.action : {};
      const cmd = Array.isArray(a.command) ? a.command.map(String).join(' ') : JSON.stringify(a);
      return [{ kind: 'tool_call', text: `shell ${cmd}`, collapsed: true }];
    }
    case 'web_search_call': {
      const a = isObj(p.action) ? p.action : {};
      const q = typeof a.query === 'string' ? a.query : JSON.stringify(a);
      return [{ kind: 'tool_call', text: `web_search ${q}`, collapsed: true }];
    }
    case 'function_call_output':
    case 'custom_tool_call_output':
    case 'local_shell_call_output':
      return [{ kind: 'tool_result', text: outputText(p.output), collapsed: true }];
    default:
      // ghost_snapshot (a git snapshot for undo) and unknown item types: nothing a reader follows.
      return [];
  }
}

/**
 * The rendered parts of one Codex rollout line (its parsed value); [] for lines the viewer does not show.
 *
 * What is shown: response_item lines (the conversation the model sees) and compaction. What is not, and why:
 * - session_meta: the session's header (id, cwd, version, instructions); the viewer shows the share's own header.
 * - turn_context: the settings of each turn (model, sandbox, approval policy), repeated before every request.
 * - event_msg: the UI's event stream. user_message, agent_message, agent_reasoning and exec_command_end repeat what
 *   the response_item lines already hold, so showing them would print every message twice. Only the events that
 *   carry something no response_item says are shown: an aborted turn and an error.
 */
export function renderCodexLine(v: Obj): RenderedPart[] {
  const p = v.payload;
  if (!isObj(p)) return [];
  if (v.type === 'response_item') return responseItemParts(p);
  if (v.type === 'compacted') {
    const text = str(p.message);
    return [{ kind: 'system', text: 'conversation compacted' }, ...(text ? [{ kind: 'summary' as const, text }] : [])];
  }
  if (v.type === 'event_msg') {
    if (p.type === 'turn_aborted') return [{ kind: 'system', text: `turn aborted${typeof p.reason === 'string' ? ` (${p.reason})` : ''}` }];
    if (p.type === 'error' && typeof p.message === 'string') return [{ kind: 'system', text: `error: ${p.message}` }];
  }
  return [];
}

/** Payload fields that hold user or model content, by line type (for response_item: by item type). */
const ITEM_FIELDS: Record<string, string[]> = {
  message: ['content'],
  reasoning: ['summary', 'content'],
  function_call: ['arguments', 'name'],
  custom_tool_call: ['input', 'name'],
  local_shell_call: ['action'],
  web_search_call: ['action'],
  function_call_output: ['output'],
  custom_tool_call_output: ['output'],
  local_shell_call_output: ['output'],
  ghost_snapshot: ['ghost_commit'],
};
const LINE_FIELDS: Record<string, string[]> = {
  session_meta: ['cwd', 'git', 'instructions', 'base_instructions'],
  turn_context: ['cwd', 'user_instructions', 'developer_instructions', 'collaboration_mode', 'sandbox_policy', 'permission_profile'],
  compacted: ['message', 'replacement_history'],
};

/**
 * The values inside a Codex line that hold user or model content, which redaction must scan. Every event_msg is
 * content whole (messages, command output, patches). A reasoning item's encrypted_content is left out: it is
 * ciphertext only the provider reads, and rewriting a byte of it would make the provider refuse the resumed session.
 */
export function codexRedactionTargets(v: Obj): unknown[] {
  const p = v.payload;
  if (!isObj(p)) return v.payload === undefined ? [] : [v.payload];
  if (v.type === 'event_msg') return [p];
  const fields = v.type === 'response_item' ? ITEM_FIELDS[str(p.type)] : LINE_FIELDS[str(v.type)];
  // An item type this code does not know yet: all of it is scanned, as nothing says which part is safe.
  if (fields === undefined) return [p];
  const out: unknown[] = [];
  for (const k of fields) if (p[k] !== undefined && p[k] !== null) out.push(p[k]);
  return out;
}

/** The parts of a sync or share entry holding a Codex line (type agent_line, agent codex), or null for any other entry. */
export function renderCodexEntry(entry: Obj): RenderedPart[] | null {
  if (entry.type !== 'agent_line' || entry.agent !== 'codex') return null;
  let v: unknown = entry.value;
  if (v === undefined && typeof entry.line === 'string') {
    try {
      v = JSON.parse(entry.line);
    } catch {
      return []; // a line that is not JSON has nothing to show; the share or sync reported it where it was read
    }
  }
  return isObj(v) ? renderCodexLine(v) : [];
}
