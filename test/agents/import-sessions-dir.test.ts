// `sessync import` with a named pi sessions folder that does not exist. Named by SESSYNC_SESSIONS_DIR (set for every
// command): a Claude Code or Codex share imports (it writes into that agent's folder, never pi's), a pi share is refused
// with nothing written. Named by --sessions-dir on the import itself: refused before the share is fetched.
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { Machine, freePort, useServer } from '../sync/helpers.js';
import { ClaudeMachine, turn } from './claude-rig.js';
import { CodexMachine } from './codex-rig.js';

const CLAUDE_SESSION = '6b6b6b6b-1111-4222-8333-444444444444';
const CODEX_SESSION = '019b04ae-b1c6-7c72-a134-a4c2de66058d';

const lastError = (r: CliResult) => (JSON.parse(r.stderr.trimEnd().split('\n').at(-1)!) as { error: { code: string; message: string } }).error;

describe('import with a missing named sessions folder', () => {
  const rig = useServer(undefined, 'sessync-import-dir-');
  const urls = { claude: '', codex: '', pi: '' };

  beforeAll(async () => {
    const cc = new ClaudeMachine(rig.root, 'cc-sharer');
    await cc.login(rig.server);
    cc.write(`${CLAUDE_SESSION}.jsonl`, turn(CLAUDE_SESSION, realpathSync(cc.project), null, 'a claude question', ['c1111111-1111-4111-8111-111111111111', 'c2222222-2222-4222-8222-222222222222'], '2026-01-01T00:00:00.000Z'));
    urls.claude = (await cc.ok(['share', CLAUDE_SESSION.slice(0, 8), '--json', '--agent', 'claude-code'])).url;

    const cx = new CodexMachine(rig.root, 'cx-sharer');
    await cx.login(rig.server);
    const cwd = realpathSync(cx.project);
    const rollout = join(cx.sessionsDir, '2025', '12', '09', `rollout-2025-12-09T19-55-16-${CODEX_SESSION}.jsonl`);
    mkdirSync(join(rollout, '..'), { recursive: true });
    writeFileSync(rollout, [
      { timestamp: '2025-12-09T19:55:16.336Z', type: 'session_meta', payload: { id: CODEX_SESSION, timestamp: '2025-12-09T19:55:16.295Z', cwd, originator: 'codex_cli_rs', cli_version: '0.66.0', source: 'cli', model_provider: 'openai' } },
      { timestamp: '2025-12-09T19:55:18.144Z', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a codex question' }] } },
    ].map((l) => JSON.stringify(l) + '\n').join(''));
    urls.codex = (await cx.ok(['share', CODEX_SESSION.slice(0, 13), '--json', '--agent', 'codex'])).url;

    const pi = new Machine(rig.root, 'pi-sharer');
    await pi.login(rig.server);
    const id = await pi.newSession();
    await pi.say(id, 'a pi question');
    urls.pi = (await pi.ok(['share', id, '--json'])).url;
  }, 120_000);

  it('named by SESSYNC_SESSIONS_DIR: Claude Code and Codex shares import, a pi share is refused', async () => {
    const claudeDir = join(rig.root, 'importer-env', 'claude');
    const codexHome = join(rig.root, 'importer-env', 'codex');
    const typo = join(rig.root, 'importer-env', 'sesions');
    const b = new Machine(rig.root, 'importer-env', { env: { CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: codexHome, SESSYNC_SESSIONS_DIR: typo } });

    // Each into its own agent's folder.
    for (const [url, agent, folder, text] of [[urls.claude, 'claude-code', claudeDir, 'a claude question'], [urls.codex, 'codex', codexHome, 'a codex question']] as const) {
      const r = await b.run(['import', url, '--json']);
      expect(r.code, `${agent}: ${r.stderr}`).toBe(0);
      const out = r.json() as { path: string; agent: string };
      expect(out.agent).toBe(agent);
      expect(out.path.startsWith(folder), out.path).toBe(true);
      expect(readFileSync(out.path, 'utf8')).toContain(text);
    }

    // A pi share writes into that folder: refused, as before, naming it.
    const pi = await b.run(['import', urls.pi, '--json']);
    expect(pi.code, pi.stderr).toBe(2);
    expect(lastError(pi)).toMatchObject({ code: 'bad_input' });
    expect(lastError(pi).message).toContain(`${typo} does not exist`);
    expect(existsSync(typo), 'the named folder is never made').toBe(false);
  });

  it('named by --sessions-dir: refused before anything is fetched, whatever the share', async () => {
    const typo = join(rig.root, 'importer-flag', 'sesions');
    const b = new Machine(rig.root, 'importer-flag', { env: { CLAUDE_CONFIG_DIR: join(rig.root, 'importer-flag', 'claude'), CODEX_HOME: join(rig.root, 'importer-flag', 'codex') } });
    // The pi share's link on a server that is not there: a request would fail as unreachable, not on the folder.
    const dead = urls.pi.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${await freePort()}`);
    for (const url of [dead, urls.pi, urls.claude, urls.codex]) {
      const r = await b.run(['import', url, '--json', '--sessions-dir', typo]);
      // Seen failing on old code: the dead link's import fetched first (exit 1, unreachable); the Claude Code and Codex ones imported.
      expect(r.code, `${url}: ${r.stderr}`).toBe(2);
      expect(lastError(r)).toMatchObject({ code: 'bad_input' });
      expect(lastError(r).message).toContain(`--sessions-dir ${typo} does not exist`);
    }
    expect(existsSync(typo), 'the named folder is never made').toBe(false);
  });
});
