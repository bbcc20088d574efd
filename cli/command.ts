// The shape every CLI command has, and the context it runs with.
import type { ParseArgsConfig } from 'node:util';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

export interface CommandContext {
  /** Positional arguments after the command name. */
  args: string[];
  /** Parsed options (common ones included: json, cwd, sessions-dir). */
  opts: Record<string, string | boolean | string[] | undefined>;
  json: boolean;
  /** --cwd or process.cwd(), not yet realpath-normalised. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
  /** Writes a result: the human text, or with --json the value as one JSON document. */
  print(human: string, value?: unknown): void;
  /** Progress and notes for humans: stderr, silent with --json. */
  info(text: string): void;
  /** What the command waits for (a retry): stderr in both modes, with --json as one JSON line `{"waiting": ...}`. */
  waiting(text: string, detail: Record<string, unknown>): void;
}

/** How a command uses the named sessions folder: see Command.usesSessions. */
export type SessionsUse = 'needs' | 'lists';
/** What a command declares: a use, or 'none' (login, key, serve...), said outright so a new command cannot forget it. */
export type SessionsUseDecl = SessionsUse | 'none';

export interface Command {
  summary: string;
  /** Usage line(s) after `sessync <name>`, e.g. `<ref> [--at ENTRY]`. */
  usage: string;
  /** Longer help text, optional. */
  help?: string;
  options?: OptionSpec;
  /**
   * Whether this run uses the session files of the folder --sessions-dir / SESSYNC_SESSIONS_DIR names, so a named
   * folder that does not exist is checked only where it matters: 'needs' refuses it (a typo must create nothing),
   * 'lists' shows it as holding no sessions, with a note. 'none' (login, key, serve...): the folder is not looked at.
   * A function answers per run (sync --agent claude-code never uses pi's folder); null means not at all. Required,
   * so that a command added later says which it is (a forgotten one would never check a typo'd folder).
   */
  usesSessions: SessionsUseDecl | ((ctx: CommandContext) => Promise<SessionsUse | null>);
  /** Returns the exit code (0 when omitted). Throws SessyncError for user-facing failures. */
  run(ctx: CommandContext): Promise<number | void>;
}
