// pi's session format behind the agent seam: a thin adapter over the pi code of shared/ (entries, tree, jsonl).
import { checkEntry, type SessionEntry } from '../entry.js';
import { parseJsonLines, serializeLine, type Problem } from '../jsonl.js';
import { SessionTree } from '../tree.js';
import type { Agent, AgentEnv, AgentLine, MessageCount, ParsedAgentFile, ProjectHints, RenderedPart, SessionFile } from './agent.js';
import { lineObject } from './line-value.js';

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** pi's folder name for a cwd (the same rule as the CLI's store): `--<cwd without its leading slash, / \ : as ->--`. */
export function piProjectFolder(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
}

function asEntry(l: AgentLine): SessionEntry {
  return l.value as SessionEntry;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c: { type?: string; text?: unknown }) => (c?.type === 'text' && typeof c.text === 'string' ? c.text : '')).filter(Boolean).join('\n');
}

export const pi: Agent = {
  name: 'pi',

  sessionsRoot(env: AgentEnv, home: string): string {
    const h = home.replace(/\/+$/, '');
    // pi expands a leading ~ of its variable itself (config.js expandTildePath).
    const dir = (str(env.PI_CODING_AGENT_DIR) ?? `${h}/.pi/agent`).replace(/^~(?=\/|$)/, h);
    return `${dir.replace(/\/+$/, '')}/sessions`;
  },

  projectFolder: piProjectFolder,

  mainFile(session: string, timestamp: string): string {
    return `${timestamp.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 64)}_${session}.jsonl`;
  },

  sessionOf(rel: string): string | null {
    if (rel.includes('/') || !rel.endsWith('.jsonl')) return null;
    const us = rel.indexOf('_');
    return us < 0 ? null : rel.slice(us + 1, -'.jsonl'.length) || null;
  },

  sessionFiles(session: string, rels: readonly string[]): SessionFile[] {
    // One file per session: nothing else of pi's travels with it.
    const main = rels.find((r) => pi.sessionOf(r) === session);
    return main ? [{ rel: main, kind: 'main' }] : [];
  },

  parseFile(text: string): ParsedAgentFile {
    const { lines: raw, tail } = parseJsonLines(text);
    const lines: AgentLine[] = [];
    const problems: Problem[] = [];
    let header: Record<string, unknown> | undefined;
    for (const r of raw) {
      if (!r.value) {
        problems.push({ line: r.line, reason: r.error ?? 'not a JSON object' });
        continue;
      }
      if (r.value.type === 'session') {
        header ??= r.value; // it travels in the session's meta, not as a line
        continue;
      }
      const why = checkEntry(r.value);
      if (why !== null) {
        // Includes format-1 lines (no ids): the CLI migrates such a file before it syncs it.
        problems.push({ line: r.line, reason: why });
        continue;
      }
      const e = r.value as SessionEntry;
      lines.push({ line: r.line, text: r.text, value: r.value, id: e.id, parent: e.parentId, prev: lines.length > 0 ? lines[lines.length - 1]!.id : null, timestamp: e.timestamp });
    }
    return { lines, problems, tail, ...(header ? { header } : {}) };
  },

  projectHints(main: ParsedAgentFile): ProjectHints {
    return { cwd: str(main.header?.cwd) ?? null };
  },

  leaf(lines: readonly AgentLine[]): string | null {
    // pi continues from the last entry of its file.
    return lines.length > 0 ? lines[lines.length - 1]!.id : null;
  },

  syncLeaf(lines: readonly AgentLine[]): string | null {
    return SessionTree.from(lines.map(asEntry)).leafId;
  },

  pinLeaf(): string[] {
    // Pulled pi entries are appended with the newest tip last (shared/merge.ts), which is pi's leaf rule; a checkout
    // line needs a fresh id and time, which two machines would not share.
    return [];
  },

  toEntry(line: AgentLine): SessionEntry {
    return asEntry(line);
  },

  wireLine(line: AgentLine): string {
    return line.text; // push sends pi's line as it is in the file
  },

  fromEntry(entry: SessionEntry, wireText?: string): { rel: string; text: string } | null {
    // The line as it arrived, byte for byte (pull appends that); serialised only when no text came with it.
    return { rel: '', text: wireText ?? serializeLine(entry) };
  },

  countMessage(text: string): MessageCount {
    // pi's own count (its session list, and sessync's tail state of pi files): every `message` entry, whatever its
    // role (user, assistant, toolResult, bashExecution, custom); one response is one entry.
    return { counts: lineObject(text)?.type === 'message', mark: null };
  },

  render(line: AgentLine): RenderedPart[] {
    const v = line.value;
    if (v.type === 'compaction' || v.type === 'branch_summary') return [{ kind: 'summary', text: String(v.summary ?? '') }];
    if (v.type !== 'message') return [];
    const m = v.message as Record<string, unknown>;
    const role = m.role === 'user' ? 'user' : m.role === 'assistant' ? 'assistant' : m.role === 'toolResult' ? 'tool_result' : 'system';
    const text = textOf(m.content);
    return text ? [{ kind: role, text, ...(role === 'tool_result' ? { collapsed: true } : {}) }] : [];
  },

  redactionTargets(line: AgentLine): unknown[] {
    return [line.value]; // every string of a pi entry is scanned (shared/redact.ts)
  },
};
