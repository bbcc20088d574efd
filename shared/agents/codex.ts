// Codex CLI's rollout format behind the agent seam: where rollouts live, their names, chain identity, hints, leaf.
import type { SessionEntry } from '../entry.js';
import { parseJsonLines, serializeLine, type Problem } from '../jsonl.js';
import type { Agent, AgentEnv, AgentLine, MessageCount, ParsedAgentFile, ProjectHints, RenderedPart, SessionFile } from './agent.js';
import { AGENT_LINE_TYPE } from './claude-code.js';
import { codexRedactionTargets, onlyInjected, renderCodexLine } from './codex-render.js';
import { sha256HexSync } from './line-hash.js';
import { lineObject } from './line-value.js';

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const UUID_RE = new RegExp(`^${UUID}$`);
/** `YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl`, as Codex names a rollout inside its sessions folder. */
const ROLLOUT_RE = new RegExp(`^(\\d{4})/(\\d{2})/(\\d{2})/rollout-[0-9T:-]{1,40}-(${UUID})\\.jsonl$`);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Items a model response is made of, one line each (a message among them only with role assistant). */
const RESPONSE_ITEMS = new Set(['message', 'reasoning', 'function_call', 'custom_tool_call', 'local_shell_call', 'web_search_call']);
/** Items holding a tool's result: one message each, as pi's tool results are. */
const TOOL_OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output', 'local_shell_call_output']);
/** The mark of a line inside a model response: the response's next items do not count again. */
const IN_RESPONSE = 'response';

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The local date and time Codex puts in a rollout's folders and name, for an ISO timestamp (now when it does not parse). */
export function codexLocalTime(timestamp: string): { y: string; m: string; d: string; name: string } {
  let t = new Date(timestamp);
  if (Number.isNaN(t.getTime())) t = new Date();
  const y = pad(t.getFullYear(), 4);
  const m = pad(t.getMonth() + 1);
  const d = pad(t.getDate());
  return { y, m, d, name: `${y}-${m}-${d}T${pad(t.getHours())}-${pad(t.getMinutes())}-${pad(t.getSeconds())}` };
}

/** The session_meta payload of a rollout's first line, when it has one. */
export function codexMeta(lines: readonly AgentLine[]): Record<string, unknown> | undefined {
  const first = lines[0];
  return first && first.value.type === 'session_meta' ? obj(first.value.payload) : undefined;
}

/** Identity of a line: the session, its predecessor's identity and its exact text. Two machines with one prefix agree. */
export function codexLineId(session: string, prev: string | null, text: string): string {
  return `x-${sha256HexSync(`${session}\n${prev ?? ''}\n${text}`).slice(0, 40)}`;
}

/** The session a rollout belongs to: its first line's session_meta id, else the uuid its file name carries. */
function sessionOfText(first: Record<string, unknown> | undefined, file: SessionFile): string {
  const meta = first?.type === 'session_meta' ? obj(first.payload) : undefined;
  const id = str(meta?.id);
  if (id !== undefined) return id;
  return codex.sessionOf(file.rel) ?? file.rel;
}

export const codex: Agent = {
  name: 'codex',

  sessionsRoot(env: AgentEnv, home: string): string {
    const dir = str(env.CODEX_HOME) ?? `${home.replace(/\/+$/, '')}/.codex`;
    return `${dir.replace(/\/+$/, '')}/sessions`;
  },

  projectFolder(): string {
    // Codex files rollouts by date, not by project: every rollout is relative to the sessions folder itself.
    return '';
  },

  mainFile(session: string, timestamp: string): string {
    const t = codexLocalTime(timestamp);
    return `${t.y}/${t.m}/${t.d}/rollout-${t.name}-${session}.jsonl`;
  },

  sessionOf(rel: string): string | null {
    const m = ROLLOUT_RE.exec(rel);
    return m ? m[4]! : null;
  },

  sessionFiles(session: string, rels: readonly string[]): SessionFile[] {
    // One file per session: a fork is a session of its own.
    const main = rels.find((r) => codex.sessionOf(r) === session);
    return main ? [{ rel: main, kind: 'main' }] : [];
  },

  parseFile(text: string, file: SessionFile): ParsedAgentFile {
    const { lines: raw, tail } = parseJsonLines(text);
    const lines: AgentLine[] = [];
    const problems: Problem[] = [];
    let session: string | undefined;
    for (const r of raw) {
      if (!r.value) {
        problems.push({ line: r.line, reason: r.error ?? 'not a JSON object' });
        continue;
      }
      session ??= sessionOfText(r.value, file);
      const prev = lines.length > 0 ? lines[lines.length - 1]!.id : null;
      const id = codexLineId(session, prev, r.text);
      // A rollout is a chain: each line continues the one written before it.
      const line: AgentLine = { line: r.line, text: r.text, value: r.value, id, parent: prev, prev };
      const ts = str(r.value.timestamp);
      if (ts !== undefined) line.timestamp = ts;
      lines.push(line);
    }
    return { lines, problems, tail };
  },

  projectHints(main: ParsedAgentFile): ProjectHints {
    const meta = codexMeta(main.lines);
    let cwd = str(meta?.cwd);
    if (cwd === undefined) for (const l of main.lines) if ((cwd = str(obj(l.value.payload)?.cwd)) !== undefined) break;
    const git = obj(meta?.git);
    const branch = str(git?.branch);
    const url = str(git?.repository_url);
    return { cwd: cwd ?? null, ...(branch !== undefined ? { gitBranch: branch } : {}), ...(url !== undefined ? { gitUrl: url } : {}) };
  },

  leaf(lines: readonly AgentLine[]): string | null {
    // Codex resumes by appending to the end of the rollout.
    return lines.length > 0 ? lines[lines.length - 1]!.id : null;
  },

  syncLeaf(lines: readonly AgentLine[]): string | null {
    // A rollout holds one line of work: its last line. Two lines of work become two rollouts (shared/codex-fork.ts).
    return codex.leaf(lines);
  },

  pinLeaf(): string[] {
    return []; // Codex has no line that moves its leaf: divergent work becomes a fork rollout instead.
  },

  toEntry(line: AgentLine): SessionEntry {
    return { type: AGENT_LINE_TYPE, agent: 'codex', id: line.id, parentId: line.prev, timestamp: line.timestamp ?? '', file: '', line: line.text };
  },

  fromEntry(entry: SessionEntry): { rel: string; text: string } | null {
    if (entry.type !== AGENT_LINE_TYPE || entry.agent !== 'codex' || entry.file !== '') return null;
    const text = typeof entry.line === 'string' ? entry.line : typeof entry.value === 'object' && entry.value !== null ? JSON.stringify(entry.value) : null;
    if (text === null || text.includes('\n')) return null; // one line is one line
    return { rel: '', text };
  },

  countMessage(text: string, _file: string, mark: string | null): MessageCount {
    const none = { counts: false, mark };
    // The conversation is in response_item lines; event_msg lines repeat it for the UI and would count it twice.
    if (!text.includes('"response_item"')) return none;
    const v = lineObject(text);
    const p = obj(v?.payload);
    if (v?.type !== 'response_item' || p === undefined || typeof p.type !== 'string') return none;
    if (p.type === 'message' && p.role !== 'assistant') {
      // Input to the next response: what the user typed counts; Codex's own instructions (developer) and the
      // context it injects as user text (environment, AGENTS.md) do not.
      return { counts: p.role === 'user' && !onlyInjected(p.content), mark: null };
    }
    if (TOOL_OUTPUTS.has(p.type)) return { counts: true, mark: null };
    // One response is several items (reasoning, its text, its tool calls), each a line: it counts once.
    if (RESPONSE_ITEMS.has(p.type)) return { counts: mark !== IN_RESPONSE, mark: IN_RESPONSE };
    return none; // ghost_snapshot (a git snapshot for undo) and item types not known here
  },

  render(line: AgentLine): RenderedPart[] {
    return renderCodexLine(line.value);
  },

  redactionTargets(line: AgentLine): unknown[] {
    return codexRedactionTargets(line.value);
  },
};

const encoder = new TextEncoder();

/**
 * Bytes of `entry` as a mirror line, when that is over `max` (else null): what a push refuses to send. Only a line long
 * enough to come near `max` is measured (one character is at most 12 bytes once escaped twice: in the line, and the
 * line in its entry).
 */
export function entryOverLimit(entry: SessionEntry, max: number): number | null {
  const text = typeof entry.line === 'string' ? entry.line : '';
  if (text.length * 12 + 1024 <= max) return null;
  const bytes = encoder.encode(serializeLine(entry)).byteLength;
  return bytes > max ? bytes : null;
}

/**
 * The lines of a rollout that can travel: one whose entry would be over `max` bytes stays in its file only, and each
 * line after it continues the last line that travels, so a machine whose copy lacks it names every other line the same.
 */
export function codexTravelling(lines: readonly AgentLine[], file: SessionFile, max: number): { lines: AgentLine[]; over: { line: AgentLine; bytes: number }[] } {
  const out: AgentLine[] = [];
  const over: { line: AgentLine; bytes: number }[] = [];
  if (lines.length === 0) return { lines: out, over };
  const session = sessionOfText(lines[0]!.value, file);
  for (const l of lines) {
    const prev = out.length > 0 ? out[out.length - 1]!.id : null;
    const line = l.prev === prev ? l : { ...l, id: codexLineId(session, prev, l.text), parent: prev, prev };
    const bytes = entryOverLimit(codex.toEntry(line, file), max);
    if (bytes === null) out.push(line);
    else over.push({ line: l, bytes });
  }
  return { lines: out, over };
}

/** True for a Codex session id (a uuid: the file name must carry it, or `codex exec resume` cannot find it). */
export function isCodexSessionId(id: string): boolean {
  return UUID_RE.test(id);
}
