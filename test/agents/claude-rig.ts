// Machines for Claude Code sync tests: a sessync home, a Claude Code config folder and a project, all in a temp root.
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeCode, claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { Machine, type TestServer } from '../sync/helpers.js';

export class ClaudeMachine extends Machine {
  readonly claudeDir: string;

  constructor(root: string, name: string, opts: { remote?: string; project?: string } = {}) {
    const claudeDir = join(root, name, 'claude');
    super(root, name, { ...opts, env: { CLAUDE_CONFIG_DIR: claudeDir } });
    this.claudeDir = claudeDir;
    mkdirSync(join(claudeDir, 'projects'), { recursive: true });
  }

  /** This project's Claude Code folder (the encoding of its real path). */
  get folder(): string {
    return join(this.claudeDir, 'projects', claudeProjectFolder(realpathSync(this.project)));
  }

  write(rel: string, text: string, folder = this.folder): string {
    const path = join(folder, rel);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  read(rel: string, folder = this.folder): string {
    return readFileSync(join(folder, rel), 'utf8');
  }

  /** Every file under the Claude Code projects folder, relative to it. */
  files(): string[] {
    const root = join(this.claudeDir, 'projects');
    return (readdirSync(root, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
      .filter((d) => d.isFile())
      .map((d) => join(d.parentPath, d.name).slice(root.length + 1))
      .sort();
  }

  /** Claude Code's own leaf for the session in this project's folder. */
  leaf(session: string): string | null {
    return claudeCode.leaf(claudeCode.parseFile(this.read(`${session}.jsonl`), { rel: `${session}.jsonl`, kind: 'main' }).lines);
  }
}

/** The exact lines of a text, sorted: what two machines must both hold (order may differ, bytes may not). */
export function lineSet(text: string): string[] {
  return text.split('\n').filter((l) => l !== '').sort();
}

/** A Claude Code turn as the CLI writes it: user line, assistant line, last-prompt naming the assistant. */
export function turn(session: string, cwd: string, parent: string | null, prompt: string, ids: [string, string], at: string): string {
  const user = { parentUuid: parent, isSidechain: false, type: 'user', message: { role: 'user', content: prompt }, uuid: ids[0], timestamp: at, cwd, sessionId: session, version: '2.1.328' };
  const assistant = { parentUuid: ids[0], isSidechain: false, type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: `answer to ${prompt}` }] }, uuid: ids[1], timestamp: at, cwd, sessionId: session };
  const last = { type: 'last-prompt', lastPrompt: prompt, leafUuid: ids[1], sessionId: session };
  return [user, assistant, last].map((o) => JSON.stringify(o) + '\n').join('');
}

/** Two logged-in machines `<name>-a` and `<name>-b` with clones of one repository at different paths. */
export async function claudePair(root: string, name: string, server: TestServer): Promise<{ a: ClaudeMachine; b: ClaudeMachine }> {
  const remote = `git@github.com:Acme/${name}.git`;
  const a = new ClaudeMachine(root, `${name}-a`, { remote });
  const b = new ClaudeMachine(root, `${name}-b`, { remote });
  await a.login(server);
  await b.login(server);
  return { a, b };
}
