// A machine for Codex share tests: the sync tests' Codex machine with a HOME of its own, a rollout writer and a codex runner.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { codexConfig, codexNew, codexResume } from './codex-cli.js';
import { CodexMachine } from './codex-rig.js';

export class ShareMachine extends CodexMachine {
  /** sessync runs with this HOME too (not the real one): its home-path redaction sees only the test's folders. */
  override get env(): Record<string, string> {
    return { ...super.env, HOME: this.userHome, CLAUDE_CONFIG_DIR: join(this.userHome, 'no-claude') };
  }

  /** Writes a rollout at `rel` under the sessions folder (e.g. 2025/12/09/rollout-...-<uuid>.jsonl). */
  writeRollout(rel: string, text: string): string {
    const path = join(this.sessionsDir, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  configure(api: string): void {
    codexConfig(this.codexHome, api);
  }

  private get where(): { cwd: string; home: string; codexHome: string } {
    return { cwd: this.project, home: this.userHome, codexHome: this.codexHome };
  }

  /** A new session of the real codex here; its id. */
  codexSession(bin: string, prompt: string): Promise<string> {
    return codexNew(bin, this.where, prompt);
  }

  resume(bin: string, id: string, prompt: string): Promise<string> {
    return codexResume(bin, this.where, id, prompt);
  }
}
