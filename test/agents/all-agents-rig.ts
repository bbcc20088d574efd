// A machine with every agent's folder (pi's store, Claude Code's, Codex's), and the real fixture sessions placed in them.
import { appendFileSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { codex } from '../../shared/agents/codex.js';
import { Machine } from '../sync/helpers.js';
import { FIXTURES } from './fixture-samples.js';

/** The Claude Code fixture (CC 2.0.28) and its session id; the Codex rollout (0.66.0), its id and start time. */
export const CLAUDE_FIXTURE = join(FIXTURES, 'claude-code', 'lanegrid__agtrace__claude_session.jsonl');
export const CLAUDE_SESSION = '7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9';
export const CODEX_FIXTURE = join(FIXTURES, 'codex', 'lanegrid__agtrace__codex_session.jsonl');
export const CODEX_SESSION = '019b04ae-b1c6-7c72-a134-a4c2de66058c';
const CODEX_START = '2025-12-09T19:55:16.295Z';
/** The cwd both fixtures were recorded in (their repository anonymised it). */
const FIXTURE_CWD = '/Users/test_user/agent-sample';

export const fixturesPresent = existsSync(CLAUDE_FIXTURE) && existsSync(CODEX_FIXTURE);

export class AllAgentsMachine extends Machine {
  readonly claudeDir: string;
  readonly codexHome: string;

  constructor(root: string, name: string, opts: { remote?: string } = {}) {
    const claudeDir = join(root, name, 'claude');
    const codexHome = join(root, name, 'codex');
    super(root, name, { ...opts, env: { CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: codexHome } });
    this.claudeDir = claudeDir;
    this.codexHome = codexHome;
    mkdirSync(join(claudeDir, 'projects'), { recursive: true });
    mkdirSync(join(codexHome, 'sessions'), { recursive: true });
  }

  /** A Claude Code session's main file in this project's folder. */
  claudeFile(session: string): string {
    return join(this.claudeDir, 'projects', claudeProjectFolder(realpathSync(this.project)), `${session}.jsonl`);
  }

  /** A Codex rollout as Codex names it. */
  codexFile(session: string, start: string): string {
    return join(this.codexHome, 'sessions', codex.mainFile(session, start));
  }

  /** The two fixtures, as sessions of this project (their recorded cwd made this project's path). */
  placeFixtures(): { claude: string; codex: string } {
    const cwd = realpathSync(this.project);
    const claude = this.claudeFile(CLAUDE_SESSION);
    const rollout = this.codexFile(CODEX_SESSION, CODEX_START);
    for (const [from, to] of [[CLAUDE_FIXTURE, claude], [CODEX_FIXTURE, rollout]] as const) {
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, readFileSync(from, 'utf8').replaceAll(FIXTURE_CWD, cwd));
    }
    return { claude, codex: rollout };
  }

  /** Appends lines (objects, one JSON line each) to a file, as the agent itself does. */
  append(path: string, ...lines: object[]): void {
    appendFileSync(path, lines.map((l) => JSON.stringify(l) + '\n').join(''));
  }
}
