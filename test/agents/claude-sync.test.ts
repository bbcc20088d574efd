// Claude Code sessions through the sync engine against a real `sessync serve`: two machines, each with its own Claude
// Code folder and the project at another path. Lines arrive byte-exact, subagent and tool-result files travel, the
// session lands in the local project's folder, both machines resume on one leaf, bad input is reported and blocks nothing.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import { CLI_BIN, REPO_ROOT, runCli } from '../helpers/cli.js';
import { until } from '../sync/kill-rig.js';
import { useServer } from '../sync/helpers.js';
import { ClaudeMachine, claudePair, lineSet, turn } from './claude-rig.js';
import { FIXTURES } from './fixture-samples.js';

const REMOTE = 'git@github.com:Acme/App.git';
const SESSION = '7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9'; // the sessionId of the agtrace fixture pair
const MAIN = join(FIXTURES, 'claude-code', 'lanegrid__agtrace__claude_session.jsonl');
const AGENT = join(FIXTURES, 'claude-code', 'lanegrid__agtrace__claude_agent.jsonl');
const present = existsSync(MAIN) && existsSync(AGENT);
if (!present) console.warn(`Claude Code fixtures not found under ${FIXTURES}: the Claude Code sync tests are skipped`);

describe.skipIf(!present)('Claude Code sessions through sync (real sessync serve)', () => {
  const rig = useServer(undefined, 'sessync-cc-');

  it('a session with its subagents and tool results travels byte-exact and lands in the local project folder; turns on both converge on one leaf', async () => {
    const a = new ClaudeMachine(rig.root, 'a', { remote: REMOTE });
    const b = new ClaudeMachine(rig.root, 'b', { remote: 'https://github.com/Acme/App' });
    await a.login(rig.server);
    await b.login(rig.server);
    const aCwd = realpathSync(a.project);
    // The fixture's lines say another cwd: the session still belongs to the folder it is in, with its first cwd.
    const fixture = readFileSync(MAIN, 'utf8').replaceAll('/Users/test_user/agent-sample', aCwd);
    a.write(`${SESSION}.jsonl`, fixture);
    a.write('agent-0c4c3cf8.jsonl', readFileSync(AGENT, 'utf8').replaceAll('/Users/test_user/agent-sample', aCwd));
    a.write(`${SESSION}/subagents/agent-acompact-5e6f.jsonl`, readFileSync(AGENT, 'utf8'));
    a.write(`${SESSION}/tool-results/toolu_01.txt`, 'a large tool result\nwith two lines, no final newline');

    const pushed = await a.ok(['sync', '--json']);
    expect(pushed).toMatchObject({ failed: 0 });
    expect(pushed.pushedEntries).toBe(26 + 2 + 2 + 1);

    const pulled = await b.ok(['sync', '--json']);
    expect(pulled).toMatchObject({ failed: 0, createdSessions: 1 });
    // B's folder is the encoding of B's own path, and every file is there with the same bytes.
    expect(b.folder).toBe(join(b.claudeDir, 'projects', claudeProjectFolder(realpathSync(b.project))));
    expect(b.folder).not.toBe(a.folder.replace(a.claudeDir, b.claudeDir));
    expect(b.read(`${SESSION}.jsonl`)).toBe(a.read(`${SESSION}.jsonl`)); // one writer so far: the same file, byte for byte
    expect(b.read('agent-0c4c3cf8.jsonl')).toBe(a.read('agent-0c4c3cf8.jsonl'));
    expect(b.read(`${SESSION}/subagents/agent-acompact-5e6f.jsonl`)).toBe(a.read(`${SESSION}/subagents/agent-acompact-5e6f.jsonl`));
    expect(b.read(`${SESSION}/tool-results/toolu_01.txt`)).toBe('a large tool result\nwith two lines, no final newline');
    expect(b.leaf(SESSION)).toBe(a.leaf(SESSION));

    // Each machine takes a turn from the same point, offline; then both sync.
    const base = a.leaf(SESSION);
    const bCwd = realpathSync(b.project);
    const aBefore = a.read(`${SESSION}.jsonl`);
    const bBefore = b.read(`${SESSION}.jsonl`);
    a.write(`${SESSION}.jsonl`, aBefore + turn(SESSION, aCwd, base, 'from a', ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002'], '2026-01-01T10:00:00.000Z'));
    b.write(`${SESSION}.jsonl`, bBefore + turn(SESSION, bCwd, base, 'from b', ['bbbbbbbb-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002'], '2026-01-01T10:00:05.000Z'));
    // B pins the leaf (a last-prompt line) on its first pull; that line takes one more round to reach A.
    for (const m of [a, b, a, b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });

    const aText = a.read(`${SESSION}.jsonl`);
    const bText = b.read(`${SESSION}.jsonl`);
    expect(aText.startsWith(aBefore)).toBe(true); // appended, never rewritten
    expect(bText.startsWith(bBefore)).toBe(true);
    expect(new Set(lineSet(aText))).toEqual(new Set(lineSet(bText)));
    for (const l of lineSet(aBefore + turn(SESSION, aCwd, base, 'from a', ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002'], '2026-01-01T10:00:00.000Z'))) expect(lineSet(bText)).toContain(l);
    // Both resume on the newer turn (B's), whatever order the lines came in.
    expect(a.leaf(SESSION)).toBe('bbbbbbbb-0000-4000-8000-000000000002');
    expect(b.leaf(SESSION)).toBe('bbbbbbbb-0000-4000-8000-000000000002');
    for (const m of [b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });

    // --agent pi leaves Claude Code alone.
    const piOnly = await b.ok(['sync', '--agent', 'pi', '--json']);
    expect(piOnly).toMatchObject({ pulledEntries: 0, createdSessions: 0, pushedEntries: 0 });
    expect(existsSync(join(b.home, 'sessions'))).toBe(false);
  });

  it('bad input: a line that is not JSON and a folder without its main file are reported; the rest syncs and nothing is changed', async () => {
    const { a, b } = await claudePair(rig.root, 'Bad', rig.server);
    const cwd = realpathSync(a.project);
    const id = '22222222-3333-4444-8555-666666666666';
    const orphan = '33333333-3333-4444-8555-666666666666';
    const good = turn(id, cwd, null, 'one', ['cccccccc-0000-4000-8000-000000000001', 'cccccccc-0000-4000-8000-000000000002'], '2026-01-02T00:00:00.000Z');
    const text = `${good}{"type":"user","uuid":"broken\n${turn(id, cwd, 'cccccccc-0000-4000-8000-000000000002', 'two', ['cccccccc-0000-4000-8000-000000000003', 'cccccccc-0000-4000-8000-000000000004'], '2026-01-02T00:01:00.000Z')}`;
    a.write(`${id}.jsonl`, text);
    a.write(`${orphan}/subagents/agent-abc.jsonl`, good);
    a.write('notes.jsonl', '{"no":"uuid"}\n');
    // A line with bytes that are not UTF-8 (decoding would change them): reported, not synced, left in place.
    const latin1 = '{"type":"queue-operation","content":"caf\xe9"}\n';
    appendFileSync(join(a.folder, `${id}.jsonl`), Buffer.from(latin1, 'latin1'));
    const r = await a.run(['sync', '--agent', 'claude-code']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${id}.jsonl:4: invalid JSON`);
    expect(r.stderr).toContain(`${id}.jsonl:8: bytes that are not UTF-8`);
    expect(r.stderr).toContain(`but no ${orphan}.jsonl; not synced`);
    expect(readFileSync(join(a.folder, `${id}.jsonl`)).equals(Buffer.concat([Buffer.from(text), Buffer.from(latin1, 'latin1')]))).toBe(true); // nothing rewritten locally
    await b.ok(['sync', '--agent', 'claude-code', '--json']);
    const got = b.read(`${id}.jsonl`);
    expect(lineSet(got)).toEqual(lineSet(text).filter((l) => !l.includes('"broken')));
    expect(existsSync(join(b.folder, orphan))).toBe(false);
  });

  it('a Claude Code file in the middle of a write is not appended to; its pulled lines land on the next sync', async () => {
    const { a, b } = await claudePair(rig.root, 'Busy', rig.server);
    const id = '55555555-3333-4444-8555-666666666666';
    const cwd = realpathSync(a.project);
    const first = turn(id, cwd, null, 'one', ['eeeeeeee-0000-4000-8000-000000000001', 'eeeeeeee-0000-4000-8000-000000000002'], '2026-01-04T00:00:00.000Z');
    a.write(`${id}.jsonl`, first);
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    const second = turn(id, cwd, 'eeeeeeee-0000-4000-8000-000000000002', 'two', ['eeeeeeee-0000-4000-8000-000000000003', 'eeeeeeee-0000-4000-8000-000000000004'], '2026-01-04T00:01:00.000Z');
    a.write(`${id}.jsonl`, first + second);
    await a.ok(['sync', '--json']);
    const half = '{"type":"queue-operation","operation":"enqueue"';
    b.write(`${id}.jsonl`, first + half);
    const r = await b.run(['sync']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('its last line is still being written');
    expect(r.stderr, 'the note says how to end a line a crash cut').toContain('echo >>');
    // Seen failing on old code: the summary said "pulled 3 entries into 1 session" and nothing of the wait.
    expect(r.stdout).toContain(`pulled 3 entries into 1 session; 1 session's pulled lines not written into its claude-code files yet (a last line there is being written): the next sync writes them`);
    expect(b.read(`${id}.jsonl`)).toBe(first + half);
    b.write(`${id}.jsonl`, `${first + half}}\n`);
    await b.ok(['sync', '--json']); // nothing new on the server: the lines left behind go now
    expect(lineSet(b.read(`${id}.jsonl`))).toEqual(lineSet(`${first + half}}\n${second}`));
  });

  it('the leaf pin is not appended to a main file whose last line is being written; it goes there on the next sync', async () => {
    const { a, b } = await claudePair(rig.root, 'BusyPin', rig.server);
    const id = '7a7a7a7a-3333-4444-8555-666666666666';
    const cwd = realpathSync(a.project);
    const base = 'abababab-0000-4000-8000-000000000002';
    const first = turn(id, cwd, null, 'one', ['abababab-0000-4000-8000-000000000001', base], '2026-01-05T00:00:00.000Z');
    a.write(`${id}.jsonl`, first);
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    // On b two branches from the base, the newer first: Claude Code resumes the last one, sessync the newer (a pin).
    const newer = turn(id, cwd, base, 'newer', ['abababab-0000-4000-8000-000000000003', 'abababab-0000-4000-8000-000000000004'], '2026-01-05T00:02:00.000Z');
    const older = turn(id, cwd, base, 'older', ['abababab-0000-4000-8000-000000000005', 'abababab-0000-4000-8000-000000000006'], '2026-01-05T00:01:00.000Z');
    const half = '{"type":"queue-operation","operation":"enqueue"';
    b.write(`${id}.jsonl`, first + newer + older + half);
    // Something for b to pull, so its export runs.
    a.write(`${id}.jsonl`, first + turn(id, cwd, base, 'from a', ['abababab-0000-4000-8000-000000000007', 'abababab-0000-4000-8000-000000000008'], '2026-01-05T00:00:30.000Z'));
    await a.ok(['sync', '--json']);
    const r = await b.run(['sync']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('its last line is still being written');
    expect(b.read(`${id}.jsonl`)).toBe(first + newer + older + half); // nothing glued onto the line being written
    b.write(`${id}.jsonl`, `${first + newer + older + half}}\n`);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    const text = b.read(`${id}.jsonl`);
    expect(text.startsWith(`${first + newer + older + half}}\n`)).toBe(true);
    for (const l of text.split('\n').filter((x) => x !== '')) JSON.parse(l); // every line whole
    expect(b.leaf(id)).toBe('abababab-0000-4000-8000-000000000004');
  });

  it('a run stopped between its steps: the next one carries on (pulled but not written out; mirrored but not recorded)', async () => {
    const { a, b } = await claudePair(rig.root, 'Crash', rig.server);
    const id = '88888888-3333-4444-8555-666666666666';
    const text = turn(id, realpathSync(a.project), null, 'one', ['acacacac-0000-4000-8000-000000000001', 'acacacac-0000-4000-8000-000000000002'], '2026-01-07T00:00:00.000Z');
    a.write(`${id}.jsonl`, text);
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    // As if B stopped after its pull: the mirror holds the session, Claude Code's folder and the bookkeeping do not.
    rmSync(join(b.folder, `${id}.jsonl`));
    const statePath = join(b.home, 'agents', 'claude-code', 'mirror.json');
    const st = JSON.parse(readFileSync(statePath, 'utf8'));
    delete st.sessions[id];
    writeFileSync(statePath, JSON.stringify(st));
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(b.read(`${id}.jsonl`)).toBe(text);

    // As if A stopped after mirroring a new session but before saving that: the next run carries on with that mirror.
    const id2 = '88888888-3333-4444-8555-777777777777';
    a.write(`${id2}.jsonl`, turn(id2, realpathSync(a.project), null, 'two', ['acacacac-0000-4000-8000-000000000003', 'acacacac-0000-4000-8000-000000000004'], '2026-01-07T00:01:00.000Z'));
    const aState = join(a.home, 'agents', 'claude-code', 'mirror.json');
    const saved = readFileSync(aState, 'utf8');
    await a.ok(['list', '--json']); // mirrors it
    writeFileSync(aState, saved);
    // Claude Code goes on writing to it meanwhile: those lines are mirrored and pushed too.
    appendFileSync(join(a.folder, `${id2}.jsonl`), turn(id2, realpathSync(a.project), 'acacacac-0000-4000-8000-000000000004', 'three', ['acacacac-0000-4000-8000-000000000005', 'acacacac-0000-4000-8000-000000000006'], '2026-01-07T00:02:00.000Z'));
    const r = await a.run(['sync']);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('already exists');
    expect(r.stdout).toContain('pushed 6 entries');
  });

  it('sync --watch carries Claude Code sessions both ways while it runs', async () => {
    const { a, b } = await claudePair(rig.root, 'Watch', rig.server);
    const id = '99999999-3333-4444-8555-666666666666';
    const cwd = realpathSync(a.project);
    const one = turn(id, cwd, null, 'one', ['adadadad-0000-4000-8000-000000000001', 'adadadad-0000-4000-8000-000000000002'], '2026-01-08T00:00:00.000Z');
    const child = spawn(process.execPath, [CLI_BIN, 'sync', '--watch', '--json', '--cwd', b.project], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...b.env, SESSYNC_WATCH_PULL_MS: '500' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      a.write(`${id}.jsonl`, one);
      await a.ok(['sync', '--json']);
      await until('the session on B', 60_000, async () => existsSync(join(b.folder, `${id}.jsonl`)) && b.read(`${id}.jsonl`) === one);
      // B's Claude Code writes a turn: the watcher pushes it, and A gets it.
      const two = turn(id, realpathSync(b.project), 'adadadad-0000-4000-8000-000000000002', 'two', ['adadadad-0000-4000-8000-000000000003', 'adadadad-0000-4000-8000-000000000004'], '2026-01-08T00:01:00.000Z');
      appendFileSync(join(b.folder, `${id}.jsonl`), two);
      await until('B\'s turn on A', 60_000, async () => {
        await a.ok(['sync', '--json']);
        return a.read(`${id}.jsonl`).includes('"two"');
      });
      expect(lineSet(a.read(`${id}.jsonl`))).toEqual(lineSet(one + two));
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('list and status take --agent: Claude Code sessions here and those only the server has, never under pi', async () => {
    const { a, b } = await claudePair(rig.root, 'Listed', rig.server);
    const id = '44444444-3333-4444-8555-666666666666';
    a.write(`${id}.jsonl`, turn(id, realpathSync(a.project), null, 'listed', ['dddddddd-0000-4000-8000-000000000001', 'dddddddd-0000-4000-8000-000000000002'], '2026-01-03T00:00:00.000Z'));
    // Another project's Claude Code session on the same machine: read only when asked for every project.
    const elsewhere = '45454545-3333-4444-8555-666666666666';
    a.write(`${elsewhere}.jsonl`, turn(elsewhere, '/srv/other', null, 'other', ['dededede-0000-4000-8000-000000000001', 'dededede-0000-4000-8000-000000000002'], '2026-01-03T00:00:00.000Z'), join(a.claudeDir, 'projects', '-srv-other'));
    const listed = await a.ok(['list', '--agent', 'claude-code', '--json']);
    expect(listed.map((r: { id: string }) => r.id)).toEqual([id]);
    expect(existsSync(join(a.home, 'agents', 'claude-code', 'sessions', '--srv-other--'))).toBe(false); // not even mirrored
    expect((await a.ok(['list', '--all', '--agent', 'claude-code', '--json'])).map((r: { id: string }) => r.id).sort()).toEqual([id, elsewhere].sort());
    expect(await a.ok(['list', '--agent', 'pi', '--json'])).toEqual([]);
    // A ref to a Claude Code session that only this machine has: found by the Claude Code run, whatever pi says.
    const refRun = await a.run(['status', id.slice(0, 8)]);
    expect(refRun.code, refRun.stderr).toBe(0);
    const both = await a.ok(['list', '--json']); // the default: pi and Claude Code (its folder exists)
    expect(both).toMatchObject([{ id, agent: 'claude-code' }]);
    const before = await a.ok(['status', '--agent', 'claude-code', '--json']);
    expect(before.sessions).toMatchObject([{ session: id, unpushedEntries: 3, remoteOnly: false, path: join(a.folder, `${id}.jsonl`) }]);
    expect(listed[0].path).toBe(join(a.folder, `${id}.jsonl`)); // the session's own file, not sessync's mirror of it
    expect(await a.ok(['push', id.slice(0, 8), '--json'])).toMatchObject({ pushedEntries: 3, failed: 0 });
    const after = await a.ok(['status', '--agent', 'claude-code', '--json']);
    expect(after.sessions).toMatchObject([{ session: id, unpushedEntries: 0 }]);
    const remote = await b.ok(['status', '--agent', 'claude-code', '--json']);
    expect(remote.sessions).toMatchObject([{ session: id, remoteOnly: true }]);
    expect((await b.ok(['status', '--agent', 'pi', '--json'])).sessions).toEqual([]);
  });

  it('--agent takes pi, claude-code, codex or all, and refuses anything else', async () => {
    const a = new ClaudeMachine(rig.root, 'opt', { remote: REMOTE });
    await a.login(rig.server);
    const r = await a.run(['push', '--agent', 'aider']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--agent must be one of pi, claude-code, codex, all');
    // SESSYNC_AGENT=pi turns Claude Code off for every command: its folder is not even read.
    const id = '66666666-3333-4444-8555-666666666666';
    a.write(`${id}.jsonl`, turn(id, realpathSync(a.project), null, 'off', ['ffffffff-0000-4000-8000-000000000001', 'ffffffff-0000-4000-8000-000000000002'], '2026-01-05T00:00:00.000Z'));
    const off = await runCli(['push', '--json', '--cwd', a.project], { env: { ...a.env, SESSYNC_AGENT: 'pi' } });
    expect(off.json()).toMatchObject({ pushedEntries: 0 });
    expect(existsSync(join(a.home, 'agents'))).toBe(false);
    const on = await runCli(['push', '--json', '--cwd', a.project], { env: { ...a.env, SESSYNC_AGENT: 'claude-code' } });
    expect(on.json()).toMatchObject({ pushedEntries: 3 });
    const bad = await runCli(['push', '--cwd', a.project], { env: { ...a.env, SESSYNC_AGENT: 'everything' } });
    expect(bad.stderr).toContain('SESSYNC_AGENT must be one of');
    // A machine whose Claude Code has made no project folder yet still takes Claude Code sessions by default.
    const fresh = new ClaudeMachine(rig.root, 'fresh', { remote: REMOTE });
    rmSync(join(fresh.claudeDir, 'projects'), { recursive: true });
    await fresh.login(rig.server);
    expect(await fresh.ok(['pull', '--json'])).toMatchObject({ failed: 0 });
    expect(existsSync(join(fresh.folder, `${id}.jsonl`))).toBe(true);
  });
});
