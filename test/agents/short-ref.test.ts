// The short ids `list` shows for Claude Code and Codex sessions resolve in share, log, resume and rm as pi's do (the
// README: a ref may be a prefix of the short form), and a ref matching sessions of several agents lists them all.
import { existsSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, useServer } from '../sync/helpers.js';
import { ClaudeMachine, turn } from './claude-rig.js';
import { CodexMachine, msg, startRollout } from './codex-rig.js';

/** A uuid v7: list shows its last 8 characters. */
const CODEX_ID = '01a23b8d-1111-7222-8333-4c64d76d6da2';

/** The short id `list` prints for `id` (its first column). */
async function listedShort(m: ClaudeMachine | CodexMachine, agent: string, id: string): Promise<string> {
  const r = await m.run(['list', '--agent', agent]);
  expect(r.code, r.stderr).toBe(0);
  const row = r.stdout.split('\n').find((l) => id.endsWith(l.split(' ')[0]!) || id.startsWith(l.split(' ')[0]!));
  expect(row, r.stdout).toBeDefined();
  return row!.split(' ')[0]!;
}

describe('short ids of Claude Code and Codex sessions as refs', () => {
  const rig = useServer(undefined, 'sessync-shortref-');

  it('a Codex session: share, log, resume and rm take the short form list shows', async () => {
    const m = new CodexMachine(rig.root, 'codex');
    await m.login(rig.server);
    startRollout(m, CODEX_ID, msg('hello codex', '2026-01-01T00:00:01.000Z'));
    const short = await listedShort(m, 'codex', CODEX_ID);
    expect(short).toBe('d76d6da2');
    // Seen failing on old code: share said no session matches, log/resume/rm looked only at pi's sessions.
    expect((await m.ok(['share', short, '--json'])).url).toMatch(/#/);
    const log = await m.ok(['log', short, '--json']);
    expect(log).toMatchObject({ id: CODEX_ID, agent: 'codex' });
    expect(JSON.stringify(log.entries)).toContain('hello codex');
    expect(await m.ok(['resume', short, '--json'])).toMatchObject({ id: CODEX_ID, agent: 'codex', command: `codex resume ${CODEX_ID}` });
    const rm = await m.run(['rm', short]);
    expect(rm.code).not.toBe(0);
    expect(rm.stderr).toContain(`d76d6da2 is a codex session`);
    expect(m.rollouts()).toHaveLength(1); // nothing removed
  });

  it('a pi short ref does not mirror Claude Code sessions that cannot match it; one that can is still found', async () => {
    const m = new ClaudeMachine(rig.root, 'no-refresh');
    const pi = await m.newSession();
    // A Claude Code session not mirrored yet, whose id shares nothing with the pi session's.
    const other = `${pi.startsWith('f') ? '0' : 'f'}f0f0f0f-1111-4222-8333-444444444444`;
    m.write(`${other}.jsonl`, turn(other, realpathSync(m.project), null, 'not this one', ['f1f1f1f1-0000-4000-8000-000000000001', 'f1f1f1f1-0000-4000-8000-000000000002'], '2026-01-01T00:00:02.000Z'));
    const mirror = join(m.home, 'agents', 'claude-code', 'sessions');
    expect(await m.ok(['log', pi.slice(0, 13), '--json'])).toMatchObject({ id: pi });
    // Seen failing on old code: the log of a pi session mirrored the Claude Code session first (its whole file read).
    expect(existsSync(mirror) ? readdirSync(mirror, { recursive: true }).filter((f) => String(f).endsWith('.jsonl')) : []).toEqual([]);
    // A Claude Code file whose name the ref matches is mirrored before the lookup, so the ref is ambiguous, as before.
    const twin = `${pi.slice(0, 8)}-1111-4222-8333-555555555555`;
    m.write(`${twin}.jsonl`, turn(twin, realpathSync(m.project), null, 'a twin', ['f2f2f2f2-0000-4000-8000-000000000001', 'f2f2f2f2-0000-4000-8000-000000000002'], '2026-01-01T00:00:03.000Z'));
    const both = await m.run(['log', pi.slice(0, 8)]);
    expect(both.code, both.stderr).toBe(2);
    expect(both.stderr).toContain(`${twin}  (claude-code)`);
  });

  it('a Claude Code session: log and resume by short id; one ref matching a pi and a Claude Code session lists both', async () => {
    const m = new ClaudeMachine(rig.root, 'claude');
    await m.login(rig.server);
    const pi = await m.newSession();
    const first = (await m.ok(['list', '--agent', 'pi', '--json']))[0].id as string;
    expect(first).toBe(pi);
    // A Claude Code session whose short form (its first 8) starts as the pi session's short form does.
    const c = `${pi.slice(-8, -7)}e1e1e1e-1111-4222-8333-444444444444`;
    m.write(`${c}.jsonl`, turn(c, realpathSync(m.project), null, 'hello claude', ['c1c1c1c1-0000-4000-8000-000000000001', 'c1c1c1c1-0000-4000-8000-000000000002'], '2026-01-01T00:00:02.000Z'));
    const short = await listedShort(m, 'claude-code', c);
    expect(short).toBe(c.slice(0, 8));
    const log = await m.ok(['log', short, '--json']);
    expect(log).toMatchObject({ id: c, agent: 'claude-code' });
    expect(JSON.stringify(log.entries)).toContain('hello claude');
    expect(await m.ok(['resume', short, '--json'])).toMatchObject({ id: c, agent: 'claude-code', command: `claude --resume ${c}` });
    const both = await m.run(['resume', pi.slice(-8, -7)]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(pi);
    expect(both.stderr).toContain(`${c}  (claude-code)`);
    // share takes the same rule: the ref is ambiguous, not the pi session uploaded in silence.
    const shared = await m.run(['share', pi.slice(-8, -7)]);
    expect(shared.code, shared.stdout).toBe(2);
    expect(shared.stderr).toContain(`${c}  (claude-code)`);
    // SESSYNC_AGENT names what sync and list work on; a ref of log/resume (no --agent) is found wherever it is.
    const envLog = await runCli(['log', pi.slice(-8), '--json', '--cwd', m.project], { env: { ...m.env, SESSYNC_AGENT: 'claude-code' } });
    expect(envLog.code, envLog.stderr).toBe(0);
    expect(JSON.parse(envLog.stdout)).toMatchObject({ id: pi });
    // Claude Code's mirror held by another live sessync (a sync mirroring a large folder): a pi ref still resolves,
    // with a note, where it failed `locked` once the wait ran out.
    const lock = join(m.home, 'agents', 'claude-code', 'mirror.json.lock');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));
    try {
      const held = await runCli(['log', pi.slice(-8), '--json', '--cwd', m.project], { env: { ...m.env, SESSYNC_LOCK_TIMEOUT_MS: '300' } });
      expect(held.code, held.stderr).toBe(0);
      expect(JSON.parse(held.stdout)).toMatchObject({ id: pi });
    } finally {
      rmSync(lock, { force: true });
    }

    // Several pi sessions and a Claude Code one under one ref: all of them are listed, not only pi's.
    const pi2 = await m.newSession();
    const c2 = `${pi.slice(0, 8)}-1111-4222-8333-555555555555`;
    m.write(`${c2}.jsonl`, turn(c2, realpathSync(m.project), null, 'hello again', ['c2c2c2c2-0000-4000-8000-000000000001', 'c2c2c2c2-0000-4000-8000-000000000002'], '2026-01-01T00:00:03.000Z'));
    const prefix = pi.slice(0, 4); // a v7 id's first characters are its time: both pi sessions share them
    expect(pi2.startsWith(prefix)).toBe(true);
    const three = await m.run(['resume', prefix]);
    expect(three.code).toBe(2);
    expect(three.stderr).toContain('it matches 3');
    for (const id of [pi, pi2, c2]) expect(three.stderr).toContain(id);
  });
});
