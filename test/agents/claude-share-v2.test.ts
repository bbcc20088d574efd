// A Claude Code 2.0.x session's subagent files (agent-*.jsonl beside the sessions, naming their session inside) go
// with its share, and an import writes them where today's Claude Code keeps a session's subagents.
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { buildSharePayload } from '../../shared/share-payload.js';
import { claudeShareSource, writeClaudeImport } from '../../cli/agents/claude-share.js';
import { importClaude } from '../../cli/agents/claude-import.js';
import { loadMirrorState, saveMirrorState } from '../../cli/agents/mirror-state.js';
import { tempDir } from '../helpers/cli.js';
import { FIXTURES } from './fixture-samples.js';

const SESSION = '7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9'; // the sessionId of the agtrace fixture pair
const MAIN = join(FIXTURES, 'claude-code', 'lanegrid__agtrace__claude_session.jsonl');
const AGENT = join(FIXTURES, 'claude-code', 'lanegrid__agtrace__claude_agent.jsonl');
const present = existsSync(MAIN) && existsSync(AGENT);
if (!present) console.warn(`Claude Code fixtures not found under ${FIXTURES}: the 2.0.x subagent share test is skipped`);

describe.skipIf(!present)('share of a 2.0.x session with its subagent file beside it', () => {
  const t = tempDir('sessync-ccshare2-');
  afterAll(() => t.cleanup());

  it('carries the subagent lines; import writes them under the new session', async () => {
    const project = join(t.dir, 'src', 'app');
    mkdirSync(project, { recursive: true });
    const cwd = realpathSync(project);
    const env: NodeJS.ProcessEnv = { HOME: t.dir, SESSYNC_HOME: join(t.dir, 'home'), CLAUDE_CONFIG_DIR: join(t.dir, 'claude') };
    const folder = join(t.dir, 'claude', 'projects', claudeProjectFolder(cwd));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${SESSION}.jsonl`), readFileSync(MAIN, 'utf8').replaceAll('/Users/test_user/agent-sample', cwd));
    const agent = readFileSync(AGENT, 'utf8');
    writeFileSync(join(folder, 'agent-0c4c3cf8.jsonl'), agent);
    // Another session's subagent file in the same folder stays out.
    writeFileSync(join(folder, 'agent-99999999.jsonl'), agent.replaceAll(SESSION, '11111111-2222-4333-8444-555555555555'));
    const state = await loadMirrorState(env);
    await importClaude(env, state, () => undefined);
    await saveMirrorState(env, state);

    const src = await claudeShareSource(env, SESSION, cwd, cwd, undefined);
    const subs = src!.branch.filter((e) => e.file !== '');
    expect(subs.map((e) => e.file)).toEqual(['agent-0c4c3cf8.jsonl', 'agent-0c4c3cf8.jsonl']);

    const out = join(t.dir, 'other', 'app');
    mkdirSync(out, { recursive: true });
    const imported = await writeClaudeImport(buildSharePayload(src!.header, src!.branch), { CLAUDE_CONFIG_DIR: join(t.dir, 'claude-b') }, out);
    const sub = join(imported.path.replace(/\.jsonl$/, ''), 'subagents', 'agent-0c4c3cf8.jsonl');
    // As Claude Code writes a subagent of the new session: its cwd is this project's, its sessionId the new session's.
    const want = agent.split('\n').filter(Boolean).map((l) => ({ ...JSON.parse(l), cwd: out, sessionId: imported.id }));
    expect(readFileSync(sub, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))).toEqual(want);
  });
});
