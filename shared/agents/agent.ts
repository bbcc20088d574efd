// The agent seam: what sessync must know about one coding agent's session files, answered in one place per agent.
import type { SessionEntry } from '../entry.js';
import type { Problem } from '../jsonl.js';

export const AGENT_NAMES = ['pi', 'claude-code', 'codex'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** Environment variables as given (process.env, or a test's own); nothing is read from the real one. */
export type AgentEnv = Readonly<Record<string, string | undefined>>;

/** One file of a session, by its path relative to the session's project folder ('/' separated). */
export interface SessionFile {
  rel: string;
  kind: 'main' | 'subagent' | 'tool-result';
}

/** One line of a session file: its exact text and what sessync reads from it. */
export interface AgentLine {
  /** 1-based line number in its file. */
  line: number;
  /** The line as written, without its '\n'. Never rewritten: it is what travels and what lands on the other machine. */
  text: string;
  value: Record<string, unknown>;
  /** Stable identity, the same on every machine holding this line; a valid sync entry id. */
  id: string;
  /** Identity of the line this one continues from, or null for a root (and for lines outside the tree). */
  parent: string | null;
  /** Identity of the usable line before this one in its file (null for the first): the order the file was written in. */
  prev: string | null;
  timestamp?: string;
}

export interface ParsedAgentFile {
  /** Usable lines in file order. */
  lines: AgentLine[];
  /** Lines that were not usable, with their line number: reported, and their bytes stay in the file untouched. */
  problems: Problem[];
  /** Text after the last '\n' (a line still being written): never read as a line. */
  tail: string;
  /** A header line that is not one of the session's lines (pi's), when the file has one. */
  header?: Record<string, unknown>;
}

/** Where a session was started: its cwd, when a line says it, and what else helps match it to a local project. */
export interface ProjectHints {
  cwd: string | null;
  gitBranch?: string;
  /** The repository URL the agent recorded (Codex's session_meta.git), when it did. */
  gitUrl?: string;
}

/** What Agent.countMessage says of one line: whether it is one more message, and the mark for the line after it. */
export interface MessageCount {
  counts: boolean;
  mark: string | null;
}

/** One rendered piece of a line, for the share viewer. */
export interface RenderedPart {
  kind: 'user' | 'assistant' | 'thinking' | 'tool_call' | 'tool_result' | 'summary' | 'system';
  text: string;
  /** Shown collapsed (thinking, tool output, subagent lines). */
  collapsed?: boolean;
}

export interface Agent {
  readonly name: AgentName;
  /** Where this agent keeps sessions, from its own variable else `home` (absolute, '/' separated). */
  sessionsRoot(env: AgentEnv, home: string): string;
  /** The project folder's name (inside sessionsRoot) for a cwd. Lossy for every agent: lines' cwd is the truth. */
  projectFolder(cwd: string): string;
  /** The main file's path relative to the project folder, for session `session` created at `timestamp`. */
  mainFile(session: string, timestamp: string): string;
  /** The session id a main file's relative path names, or null when the path is not a main file. */
  sessionOf(rel: string): string | null;
  /**
   * Which of `rels` (paths inside one project folder) belong to `session`, main file first. Paths of other
   * sessions and unknown files are left out; a session whose main file is missing still gets its other files
   * (the caller reports it, nothing is dropped). `firstLines` holds the first line of files whose owner only their
   * content says (Claude Code 2.0's `agent-*.jsonl` beside the sessions); a file without one is left out.
   */
  sessionFiles(session: string, rels: readonly string[], firstLines?: ReadonlyMap<string, string>): SessionFile[];
  /**
   * Reads one JSONL file of a session (through shared/jsonl.ts). Never throws on bad input: a line that is not
   * JSON, or JSON this agent cannot give an identity, becomes a Problem with its line number.
   */
  parseFile(text: string, file: SessionFile): ParsedAgentFile;
  /** The session's cwd and project hints from its parsed main file (its header, else the first line that names one). */
  projectHints(main: ParsedAgentFile): ProjectHints;
  /** The agent's own leaf rule over its main file's lines, in file order; null when there is no line to continue from. */
  leaf(lines: readonly AgentLine[]): string | null;
  /**
   * The line(s) to append so that the agent's own leaf rule picks `leaf`, or [] when it already does. Lines the agent
   * itself writes, and the same bytes on every machine (so two machines appending them agree on their identity).
   */
  pinLeaf(lines: readonly AgentLine[], leaf: string, session: string): string[];
  /** The leaf sessync agrees on for these lines, the same on every machine whatever their file order. */
  syncLeaf(lines: readonly AgentLine[]): string | null;
  /**
   * A line as one sync entry (what travels; the server checks only its envelope fields). Its parentId is what the merge
   * orders appended entries by: an agent whose files are not a tree of entries links each line to the one before it
   * (`prev`), so pulled lines land in the order they were written.
   */
  toEntry(line: AgentLine, file: SessionFile): SessionEntry;
  /**
   * The exact text a line is pushed as (one line of a batch body). Default: its entry serialised (an agent synced
   * through a mirror, whose mirror line is that); pi's own line for pi, whose files are synced as they are.
   */
  wireLine?(line: AgentLine, file: SessionFile): string;
  /**
   * The file (relative to the project folder; '' = the session's main file) and exact text an entry came from, given
   * `wireText`, the exact line it arrived as, when known. `whole`: the text is a whole file, not a line. Null when it is
   * not this agent's entry or names an unsafe path.
   */
  fromEntry(entry: SessionEntry, wireText?: string): { rel: string; text: string; whole?: boolean } | null;
  /**
   * What one line adds to its session's message count (what `list` shows), counted as pi counts its own: one for what
   * the user sent, one for each model response, one for each tool result; nothing for settings, snapshots, progress,
   * compaction or context the agent injects. An agent that writes one model response as several lines counts it
   * once: `mark` is what the call for the line before returned (null before the first line), and the answer carries
   * the mark for the line after. `text`: the line as written (a line that is not JSON counts nothing); `file`: its
   * file, '' for the session's main file (a subagent's lines are not the session's messages).
   */
  countMessage(text: string, file: string, mark: string | null): MessageCount;
  /** How a line renders in the viewer; [] for lines the viewer does not show. */
  render(line: AgentLine): RenderedPart[];
  /** The values inside a line that hold user or model content, which redaction must scan. */
  redactionTargets(line: AgentLine): unknown[];
}
