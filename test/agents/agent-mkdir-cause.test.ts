// Folders for Claude Code and Codex files, and sessync's own agent folders, on a read-only mount (a tmpfs remounted
// ro, root only): the error names the first folder that could not be made and says the file system is read-only
// (fs_readonly), never the ENOENT Node's recursive mkdir answers. And the folders an import makes keep the agents' mode.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { isSessyncError } from '../../shared/errors.js';
import { buildSharePayload } from '../../shared/share-payload.js';
import { writeClaudeImport } from '../../cli/agents/claude-share.js';
import { appendLines, exportClaude } from '../../cli/agents/claude-export.js';
import { importClaude } from '../../cli/agents/claude-import.js';
import { loadMirrorState } from '../../cli/agents/mirror-state.js';
import { refreshMirror } from '../../cli/agents/agent-run.js';
import { writeCodexImport } from '../../cli/agents/codex-import.js';
import { withCodexLock } from '../../cli/agents/codex-run.js';
import { moveIntoForks, writeWholeFile } from '../../cli/agents/codex-move.js';
import { fsError } from '../../cli/fs-error.js';
import { tempDir } from '../helpers/cli.js';
import { tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';
import { turn } from './claude-rig.js';

const S = '12121212-3333-4444-8555-666666666666';
const claudeHeader: SessionHeader = { type: 'session', version: 3, id: S, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/x', agent: 'claude-code' };
const ccLine = (id: string, parentId: string | null, file: string, value: object): SessionEntry => ({ type: 'agent_line', agent: 'claude-code', id, parentId, timestamp: '', file, value });
const claudeShare = buildSharePayload(claudeHeader, [
  ccLine('u1', null, '', { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } }),
  ccLine('agent-a.s1', 'u1', `${S}/subagents/agent-a.jsonl`, { type: 'user', uuid: 's1', isSidechain: true, message: { role: 'user', content: 'sub' } }),
]);

const OLD = '019b04ae-b1c6-7c72-a134-a4c2de66058c';
const META = `{"timestamp":"2025-12-09T19:55:16.336Z","type":"session_meta","payload":{"id":"${OLD}","timestamp":"2025-12-09T19:55:16.295Z","cwd":"/there","originator":"codex_cli_rs","cli_version":"0.66.0","source":"cli"}}`;
const USER = '{"timestamp":"2025-12-09T19:55:18.144Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}';
const codexShare = buildSharePayload(
  { type: 'session', version: 3, id: OLD, timestamp: '2025-12-09T19:55:16.295Z', cwd: '/there', agent: 'codex' },
  [META, USER].map((line, i): SessionEntry => ({ type: 'agent_line', agent: 'codex', id: `x-${i}`, parentId: i > 0 ? `x-${i - 1}` : null, timestamp: '', file: '', value: JSON.parse(line), line })),
);

/** What `p` rejects with, or null when it resolves. */
function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

/** The error as the user is shown it (cli/main.ts maps a raw fs error the same way): fs_readonly naming `folder`. */
function expectReadOnly(e: unknown, folder: string): void {
  const shown = fsError(e);
  expect(isSessyncError(shown), String(e)).toBe(true);
  expect(shown).toMatchObject({ code: 'fs_readonly', retryable: false });
  expect((shown as Error).message).toContain(`cannot create the folder ${folder}:`);
  expect((shown as Error).message).not.toContain('ENOENT');
}

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`agent-mkdir-cause: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('agent folders on a read-only mount', () => {
  const disk = useTmpfs('256k');
  const d = (...p: string[]) => join(disk.dir, ...p);
  const env = (): NodeJS.ProcessEnv => ({ HOME: d('user'), SESSYNC_HOME: d('sessync'), CLAUDE_CONFIG_DIR: d('claude'), CODEX_HOME: d('codex') });
  beforeAll(() => {
    for (const f of ['user', 'sessync', 'claude/projects', 'codex/sessions']) mkdirSync(d(f), { recursive: true });
    execFileSync('mount', ['-o', 'remount,ro', disk.dir]);
  });

  it('sessync import of a Claude Code share: fs_readonly naming the project folder', async () => {
    const cwd = '/home/me/proj';
    const e = await rejection(writeClaudeImport(claudeShare, env(), cwd));
    expectReadOnly(e, d('claude', 'projects', claudeProjectFolder(cwd)));
  });

  it('sessync import of a Codex share: fs_readonly naming the year folder under sessions/', async () => {
    const now = new Date(2026, 0, 2, 3, 4, 5);
    const e = await rejection(writeCodexImport(codexShare, env(), '/home/me/proj', now));
    expectReadOnly(e, d('codex', 'sessions', '2026'));
  });

  it('appendLines (pulled lines written out to Claude Code and Codex files): fs_readonly naming the folder', async () => {
    const e = await rejection(appendLines(d('claude', 'projects', '-new-project', `${S}.jsonl`), ['{"type":"user"}']));
    expectReadOnly(e, d('claude', 'projects', '-new-project'));
  });

  it('the Claude Code mirror lock (sync, list, status, share): fs_readonly naming sessync\'s agents folder', async () => {
    expectReadOnly(await rejection(refreshMirror('claude-code', env(), () => undefined)), d('sessync', 'agents'));
  });

  it('the Codex mirror lock: fs_readonly naming sessync\'s agents folder', async () => {
    expectReadOnly(await rejection(withCodexLock(env(), async () => undefined)), d('sessync', 'agents'));
  });

  it('a Codex fork rollout written whole: fs_readonly naming its date folder', async () => {
    expectReadOnly(await rejection(writeWholeFile(d('codex', 'sessions', '2026', '01', '02', `rollout-x-${OLD}.jsonl`), 'x\n')), d('codex', 'sessions', '2026'));
  });

  it('the backup before a Codex rollout is moved into forks: fs_readonly naming sessync\'s agents folder', async () => {
    const e = await rejection(moveIntoForks(env(), OLD, d('codex', 'sessions', 'r.jsonl'), '', []));
    expectReadOnly(e, d('sessync', 'agents'));
  });
});

describe.skipIf(unavailable !== null)('pulled Claude Code lines for a project folder on a read-only mount', () => {
  const disk = useTmpfs('256k');
  const t = tempDir('sessync-ccro-');
  afterAll(() => t.cleanup());

  it('the sync notes fs_readonly naming the folder, and leaves the session to the next run', async () => {
    // The mirror made from a writable Claude Code folder, then written out to one on the read-only mount.
    const cwd = '/home/me/proj';
    const here: NodeJS.ProcessEnv = { HOME: t.dir, SESSYNC_HOME: join(t.dir, 'sessync'), CLAUDE_CONFIG_DIR: join(t.dir, 'claude') };
    const folder = join(t.dir, 'claude', 'projects', claudeProjectFolder(cwd));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${S}.jsonl`), turn(S, cwd, null, 'hello', ['a1111111-1111-4111-8111-111111111111', 'a2222222-2222-4222-8222-222222222222'], '2026-01-01T00:00:00.000Z'));
    const state = await loadMirrorState(here);
    await importClaude(here, state, () => undefined);
    const mirror = state.sessions[S]!.mirror;
    expect(readFileSync(mirror, 'utf8')).toContain('hello');

    mkdirSync(join(disk.dir, 'projects'));
    execFileSync('mount', ['-o', 'remount,ro', disk.dir]);
    const notes: string[] = [];
    const r = await exportClaude({ ...here, CLAUDE_CONFIG_DIR: disk.dir }, { sessions: {}, files: {}, pendingExport: [] }, [mirror], (n) => notes.push(n));
    expect(r).toEqual({ sessions: 0, lines: 0, created: 0, waiting: [] }); // waiting lists only sessions a file of which ends in a line being written
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(`cannot create the folder ${join(disk.dir, 'projects', claudeProjectFolder(cwd))}: its file system is read-only`);
    expect(notes[0]).not.toContain('ENOENT');
  });
});

describe('folders an import makes in an agent\'s folder', () => {
  const t = tempDir('sessync-agentmode-');
  // A umask that keeps group and others' bits (022), so a switch to 0700 shows; 077 would hide it.
  let umask = 0;
  beforeAll(() => {
    umask = process.umask(0o022);
  });
  afterAll(() => {
    process.umask(umask);
    t.cleanup();
  });
  // Not sessync's own 0700: the agent's usual mode (Node's default 0777 under the umask), as before.
  const usual = 0o755;

  it('Claude Code: the project folder and the session\'s subagents folders', async () => {
    const r = await writeClaudeImport(claudeShare, { CLAUDE_CONFIG_DIR: join(t.dir, 'claude') }, '/home/me/proj');
    const session = r.path.replace(/\.jsonl$/, '');
    for (const dir of [join(t.dir, 'claude', 'projects', claudeProjectFolder('/home/me/proj')), session, join(session, 'subagents')]) expect(statSync(dir).mode & 0o777, dir).toBe(usual);
    expect(statSync(r.path).mode & 0o777).toBe(0o600);
  });

  it('Codex: the date folders', async () => {
    const r = await writeCodexImport(codexShare, { CODEX_HOME: join(t.dir, 'codex') }, '/home/me/proj', new Date(2026, 0, 2, 3, 4, 5));
    for (const dir of ['2026', '2026/01', '2026/01/02']) expect(statSync(join(t.dir, 'codex', 'sessions', dir)).mode & 0o777, dir).toBe(usual);
    expect(statSync(r.path).mode & 0o777).toBe(0o600);
  });
});
