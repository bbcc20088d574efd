// Claude Code's session format behind the agent seam: folders, files of a session, line identity, leaf, rendering.
import type { SessionEntry } from '../entry.js';
import { parseJsonLines, type Problem } from '../jsonl.js';
import { ENTRY_ID_RE } from '../wire.js';
import type { Agent, AgentEnv, AgentLine, MessageCount, ParsedAgentFile, ProjectHints, RenderedPart, SessionFile } from './agent.js';
import { renderClaudeLine } from './claude-render.js';
import { sha256HexSync } from './line-hash.js';
import { lineObject } from './line-value.js';

/** The entry type a Claude Code line travels in: the exact line as a string, so no byte of it is ever rewritten. */
export const AGENT_LINE_TYPE = 'agent_line';

const UUID_FILE_RE = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$/;
/** A subagent file's name (2.0.x beside the sessions, 2.1.x under <session>/subagents). */
export const AGENT_FILE_RE = /^agent-[A-Za-z0-9_-]{1,80}\.jsonl$/;
const SAFE_PART_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}$/;
/** Line types that take part in Claude Code's conversation tree (have a uuid and a parentUuid). */
const TREE_TYPES = new Set(['user', 'assistant', 'system', 'attachment', 'progress']);

/** Java's String.hashCode: what Claude Code hashes a long cwd with. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Claude Code's folder name for a cwd: each UTF-16 unit outside [A-Za-z0-9] becomes '-'; past 200, a hash of the cwd is added. */
export function claudeProjectFolder(cwd: string): string {
  const name = cwd.replace(/[^A-Za-z0-9]/g, '-');
  if (name.length <= 200) return name;
  return `${name.slice(0, 200)}-${Math.abs(javaStringHash(cwd)).toString(36)}`;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A safe relative path inside a project folder: no '..', no absolute path, no odd characters. */
function safeRel(rel: string): boolean {
  const parts = rel.split('/');
  return parts.length <= 3 && parts.every((p) => SAFE_PART_RE.test(p) && p !== '..' && p !== '.');
}

/** Identity scope of a file: '' for the main file, else its name (agent-xxxx) so subagent uuids never meet the main file's. */
function scopeOf(file: SessionFile): string {
  if (file.kind === 'main') return '';
  const base = file.rel.slice(file.rel.lastIndexOf('/') + 1).replace(/\.jsonl$/, '');
  return `${base}.`;
}

/**
 * Where reading a file stopped, so the lines after it get the identities a read of the whole file would give them:
 * the lines before (their number, the last usable one's id) and how often each identity key occurred.
 */
export interface ClaudeParseState {
  lineNo: number;
  lastId: string | null;
  seen: Record<string, number>;
}

export function freshParseState(): ClaudeParseState {
  return { lineNo: 0, lastId: null, seen: {} };
}

/**
 * Reads the complete lines of `text`, which follows the lines `from` describes (a fresh state: the file's start), and
 * moves `from` past them: reading a file in pieces gives every line the id, prev and number one read gives it.
 */
export function parseClaudeFrom(text: string, file: SessionFile, from: ClaudeParseState): ParsedAgentFile {
  const { lines: raw, tail } = parseJsonLines(text);
  const scope = scopeOf(file);
  const lines: AgentLine[] = [];
  const problems: Problem[] = [];
  const seen = from.seen;
  const occurrence = (key: string) => {
    const n = (Object.hasOwn(seen, key) ? seen[key]! : 0) + 1;
    seen[key] = n;
    return n;
  };
  for (const r of raw) {
    const no = from.lineNo + r.line;
    if (!r.value) {
      problems.push({ line: no, reason: r.error ?? 'not a JSON object' });
      continue;
    }
    const v = r.value;
    const uuid = str(v.uuid);
    let id: string;
    if (uuid !== undefined && ENTRY_ID_RE.test(scope + uuid + ':00')) {
      // The same uuid twice in one file keeps both lines: the later ones get a numbered identity.
      const n = occurrence(`u:${uuid}`);
      id = n === 1 ? scope + uuid : `${scope}${uuid}:${n}`;
    } else {
      // No uuid (summary, file-history-snapshot, queue-operation, last-prompt, ...): the exact bytes name the line.
      // Identical lines are told apart by their order among themselves, which every copy of the file shares.
      const h = `h-${sha256HexSync(`${file.rel}\n${r.text}`).slice(0, 40)}`;
      const n = occurrence(h);
      id = n === 1 ? h : `${h}-${n}`;
    }
    const p = str(v.parentUuid) ?? str(v.logicalParentUuid);
    const prev = lines.length > 0 ? lines[lines.length - 1]!.id : from.lastId;
    const line: AgentLine = { line: no, text: r.text, value: v, id, parent: p !== undefined && uuid !== undefined ? scope + p : null, prev };
    const ts = str(v.timestamp);
    if (ts !== undefined) line.timestamp = ts;
    lines.push(line);
  }
  // Complete lines only: the tail is read again, whole, next time.
  from.lineNo += countNewlines(text);
  if (lines.length > 0) from.lastId = lines[lines.length - 1]!.id;
  return { lines, problems, tail };
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function parseLines(text: string, file: SessionFile): ParsedAgentFile {
  return parseClaudeFrom(text, file, freshParseState());
}

/** Lines of the conversation tree (not subagent lines inlined by 1.0.x, not lines without a uuid). */
function treeLines(lines: readonly AgentLine[]): AgentLine[] {
  return lines.filter((l) => typeof l.value.uuid === 'string' && TREE_TYPES.has(String(l.value.type)) && l.value.isSidechain !== true);
}

function lastPromptLeaves(lines: readonly AgentLine[], known: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const l of lines) {
    if (l.value.type !== 'last-prompt') continue;
    const leaf = str(l.value.leafUuid);
    if (leaf !== undefined && known.has(leaf)) out.push(leaf);
  }
  return out;
}

export const claudeCode: Agent = {
  name: 'claude-code',

  sessionsRoot(env: AgentEnv, home: string): string {
    const dir = str(env.CLAUDE_CONFIG_DIR) ?? `${home.replace(/\/+$/, '')}/.claude`;
    return `${dir.replace(/\/+$/, '')}/projects`;
  },

  projectFolder: claudeProjectFolder,

  mainFile(session: string): string {
    return `${session}.jsonl`;
  },

  sessionOf(rel: string): string | null {
    const m = UUID_FILE_RE.exec(rel);
    return m ? m[1]! : null;
  },

  sessionFiles(session: string, rels: readonly string[], firstLines?: ReadonlyMap<string, string>): SessionFile[] {
    const out: SessionFile[] = [];
    const main = `${session}.jsonl`;
    if (rels.includes(main)) out.push({ rel: main, kind: 'main' });
    const others: SessionFile[] = [];
    for (const rel of rels) {
      if (!safeRel(rel)) continue;
      const parts = rel.split('/');
      if (parts.length === 3 && parts[0] === session && parts[1] === 'subagents' && AGENT_FILE_RE.test(parts[2]!)) others.push({ rel, kind: 'subagent' });
      else if (parts.length === 3 && parts[0] === session && parts[1] === 'tool-results') others.push({ rel, kind: 'tool-result' });
      else if (parts.length === 1 && AGENT_FILE_RE.test(rel)) {
        // 2.0.x: subagent files beside the sessions; the parent's sessionId inside their lines says whose they are.
        const first = firstLines?.get(rel);
        if (first === undefined) continue;
        const { lines } = parseJsonLines(first.endsWith('\n') ? first : `${first}\n`);
        if (lines[0]?.value?.sessionId === session) others.push({ rel, kind: 'subagent' });
      }
    }
    others.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
    return [...out, ...others];
  },

  parseFile(text: string, file: SessionFile): ParsedAgentFile {
    if (file.kind === 'tool-result') {
      // Not JSONL: the whole file is one unit, written once by Claude Code.
      const id = `f-${sha256HexSync(file.rel).slice(0, 40)}`;
      return { lines: [{ line: 1, text, value: {}, id, parent: null, prev: null }], problems: [], tail: '' };
    }
    return parseLines(text, file);
  },

  projectHints(main: ParsedAgentFile): ProjectHints {
    for (const l of main.lines) {
      const cwd = str(l.value.cwd);
      if (cwd !== undefined) {
        const branch = str(l.value.gitBranch);
        return { cwd, ...(branch !== undefined ? { gitBranch: branch } : {}) };
      }
    }
    return { cwd: null };
  },

  leaf(lines: readonly AgentLine[]): string | null {
    const tree = treeLines(lines);
    const known = new Set(tree.map((l) => String(l.value.uuid)));
    const named = lastPromptLeaves(lines, known);
    if (named.length > 0) return named[named.length - 1]!;
    return tree.length > 0 ? tree[tree.length - 1]!.id : null;
  },

  syncLeaf(lines: readonly AgentLine[]): string | null {
    // Among the tips, the leaves Claude Code itself chose (named by last-prompt lines) when there are any, else all
    // tips: the newest wins, ties by the greater id. Only the set of lines decides, never their order in the file.
    const tree = treeLines(lines);
    const parents = new Set<string>();
    for (const l of tree) for (const k of ['parentUuid', 'logicalParentUuid']) if (typeof l.value[k] === 'string') parents.add(l.value[k] as string);
    const tips = tree.filter((l) => !parents.has(String(l.value.uuid)));
    const named = new Set(lastPromptLeaves(lines, new Set(tree.map((l) => String(l.value.uuid)))));
    const chosen = tips.filter((l) => named.has(String(l.value.uuid)));
    let best: AgentLine | undefined;
    for (const l of chosen.length > 0 ? chosen : tips) {
      const t = l.timestamp ?? '';
      const bt = best?.timestamp ?? '';
      if (!best || t > bt || (t === bt && l.id > best.id)) best = l;
    }
    return best ? best.id : null;
  },

  pinLeaf(lines: readonly AgentLine[], leaf: string, session: string): string[] {
    if (claudeCode.leaf(lines) === leaf) return [];
    let prompt = '';
    for (const l of lines) if (l.value.type === 'last-prompt' && l.value.leafUuid === leaf && typeof l.value.lastPrompt === 'string') prompt = l.value.lastPrompt;
    // The line Claude Code writes after each turn, with its key order: on every machine the same bytes.
    return [JSON.stringify({ type: 'last-prompt', lastPrompt: prompt, leafUuid: leaf, sessionId: session })];
  },

  toEntry(line: AgentLine, file: SessionFile): SessionEntry {
    return {
      type: AGENT_LINE_TYPE,
      agent: 'claude-code',
      id: line.id,
      // The line written before it, not its conversation parent: pulled lines are appended in the order they were written.
      parentId: line.prev,
      timestamp: line.timestamp ?? '',
      file: file.kind === 'main' ? '' : file.rel,
      ...(file.kind === 'tool-result' ? { whole: true } : {}),
      line: line.text,
    };
  },

  fromEntry(entry: SessionEntry): { rel: string; text: string; whole?: boolean } | null {
    if (entry.type !== AGENT_LINE_TYPE || entry.agent !== 'claude-code' || typeof entry.file !== 'string') return null;
    if (entry.file !== '' && !safeRel(entry.file)) return null; // a path that could leave the project folder
    // A shared (redacted) line travels as its value, a synced one as its exact text.
    const text = typeof entry.line === 'string' ? entry.line : typeof entry.value === 'object' && entry.value !== null ? JSON.stringify(entry.value) : null;
    if (text === null) return null;
    if (entry.whole !== true && text.includes('\n')) return null; // one line is one line
    return { rel: entry.file, text, ...(entry.whole === true ? { whole: true } : {}) };
  },

  countMessage(text: string, file: string, mark: string | null): MessageCount {
    const none = { counts: false, mark };
    // Subagents' files and tool-result files are not the session's conversation; a message line names its role.
    if (file !== '' || (!text.includes('"user"') && !text.includes('"assistant"'))) return none;
    const v = lineObject(text);
    if (v === null || (v.type !== 'user' && v.type !== 'assistant') || typeof v.message !== 'object' || v.message === null) return none;
    if (v.isSidechain === true) return none; // 1.0.x wrote a subagent's lines inline, on branches of their own
    // A tool result is a user line, and counts as pi's tool results do. Context Claude Code adds as a user line
    // (isMeta: caveats, command output for the model) and the summary a compaction starts from are not sent by the user.
    if (v.type === 'user') return { counts: v.isMeta !== true && v.isCompactSummary !== true, mark };
    // Each content block of one response (thinking, text, each tool call) is a line of its own, all with the
    // response's message id: the response counts once. Tool results between its lines leave the mark as it is.
    const id = (v.message as Record<string, unknown>).id;
    if (typeof id !== 'string' || id === '') return { counts: true, mark: null };
    return { counts: id !== mark, mark: id };
  },

  render(line: AgentLine): RenderedPart[] {
    return renderClaudeLine(line.value);
  },

  redactionTargets(line: AgentLine): unknown[] {
    const v = line.value;
    if (Object.keys(v).length === 0) return [line.text]; // a tool-result file: all of it is content
    const out: unknown[] = [];
    for (const k of ['message', 'toolUseResult', 'summary', 'content', 'lastPrompt', 'snapshot', 'attachment', 'cwd']) if (v[k] !== undefined) out.push(v[k]);
    return out;
  },
};
