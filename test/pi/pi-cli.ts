// The real pi CLI (from the dev dependency) run headless for one machine: its own agent folder, a models.json
// whose one provider is the fake model API, no network (PI_OFFLINE), a clean environment.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/cli.js';

export const PI_CLI = join(REPO_ROOT, 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'cli.js');

export interface PiResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class PiAgent {
  /** PI_CODING_AGENT_DIR; its sessions/ is what sessync syncs (--sessions-dir). */
  readonly agentDir: string;
  readonly sessionsDir: string;

  constructor(
    private readonly home: string,
    baseUrl: string,
  ) {
    this.agentDir = join(home, '.pi', 'agent');
    this.sessionsDir = join(this.agentDir, 'sessions');
    mkdirSync(this.sessionsDir, { recursive: true });
    const models = { providers: { fake: { baseUrl, api: 'openai-completions', apiKey: 'FAKE_KEY', models: [{ id: 'fake-model' }] } } };
    writeFileSync(join(this.agentDir, 'models.json'), JSON.stringify(models));
  }

  /** `pi --provider fake --model fake-model ...args` in `cwd`; stdin is closed, so a prompt would end the run. */
  run(cwd: string, args: string[]): Promise<PiResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [PI_CLI, '--provider', 'fake', '--model', 'fake-model', ...args], {
        cwd,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: this.home,
          LANG: 'C.UTF-8',
          TERM: 'dumb',
          NO_COLOR: '1',
          PI_CODING_AGENT_DIR: this.agentDir,
          PI_OFFLINE: '1',
          PI_SKIP_VERSION_CHECK: '1',
          PI_TELEMETRY: '0',
          FAKE_KEY: 'dummy',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? -1, stdout, stderr });
      });
    });
  }

  /** A new session: `pi --mode json "<text>"`; its first stdout line is the header. */
  async start(cwd: string, text: string): Promise<string> {
    const r = await this.run(cwd, ['--mode', 'json', text]);
    if (r.code !== 0) throw new Error(`pi exited ${r.code}\n${r.stderr}`);
    return (JSON.parse(r.stdout.split('\n')[0]!) as { id: string }).id;
  }

  /** One more turn of an existing session: `pi -p --session <id> "<text>"`. */
  async turn(cwd: string, session: string, text: string): Promise<PiResult> {
    const r = await this.run(cwd, ['-p', '--session', session, text]);
    if (r.code !== 0) throw new Error(`pi -p --session ${session} exited ${r.code}\nstdout:${r.stdout}\nstderr:${r.stderr}`);
    return r;
  }
}
