// Machines for Codex sync tests: a sessync home, a CODEX_HOME and a project, all in a temp root.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Machine } from '../sync/helpers.js';

export class CodexMachine extends Machine {
  readonly codexHome: string;
  /** HOME for the codex process (not sessync's). */
  readonly userHome: string;

  constructor(root: string, name: string, opts: { remote?: string; project?: string } = {}) {
    const codexHome = join(root, name, 'codex');
    super(root, name, { ...opts, env: { CODEX_HOME: codexHome, SESSYNC_AGENT: 'codex' } });
    this.codexHome = codexHome;
    this.userHome = join(root, name, 'user-home');
    mkdirSync(join(codexHome, 'sessions'), { recursive: true });
    mkdirSync(this.userHome, { recursive: true });
  }

  get sessionsDir(): string {
    return join(this.codexHome, 'sessions');
  }

  /** Every rollout here, relative to sessions/. */
  rollouts(): string[] {
    return (readdirSync(this.sessionsDir, { recursive: true }) as string[]).filter((f) => /rollout-.*\.jsonl$/.test(f)).sort();
  }

  /** The one rollout of `session` here (absolute). */
  rolloutOf(session: string): string {
    const f = this.rollouts().filter((r) => r.endsWith(`-${session}.jsonl`));
    if (f.length !== 1) throw new Error(`expected one rollout of ${session} in ${this.sessionsDir}, found ${f.length}`);
    return join(this.sessionsDir, f[0]!);
  }

  text(session: string): string {
    return readFileSync(this.rolloutOf(session), 'utf8');
  }
}
