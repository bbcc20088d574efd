// A many-session pull whose leaf marker could not be written after the session's entries were: the next run writes
// it, so pi resumes the branch an uninterrupted pull gives, not the pulled entry that went last.
import { appendFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHECKOUT_CUSTOM_TYPE } from '../../shared/entry.js';
import { serializeLine } from '../../shared/jsonl.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { piView, plain, sessyncView } from '../pi/pi-view.js';
import { Machine, plantSession, plantedId, readLog, useServer } from './helpers.js';

/** Session n's planted file on `m`. */
function fileOf(m: Machine, n: number): string {
  const ts = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(); // plantSession's timestamp for session n
  return join(projectDir(join(m.home, 'sessions'), realpathSync(m.project)), sessionFileName(ts, plantedId(n)));
}

/** An entry line under session n's root, `minutes` after the root's time. */
function branchLine(n: number, id: string, minutes: number, pad = 0): string {
  const ts = new Date(Date.UTC(2026, 0, 1, 0, n) + minutes * 60_000).toISOString();
  return serializeLine({ type: 'message', id, parentId: `s${n}-e0`, timestamp: ts, message: { role: 'user', content: `${id} ${'p'.repeat(pad)}` } } as never) + '\n';
}

describe('a many-session pull stopped between a session\'s entries and its leaf marker', () => {
  const rig = useServer(undefined, 'sessync-killed-align-');

  it('the next pull writes the marker: pi and sessync resume the newest tip, the local branch', async () => {
    const REMOTE = 'git@github.com:acme/killed-align.git';
    const a = new Machine(rig.root, 'a', { remote: REMOTE });
    const b = new Machine(rig.root, 'b', { remote: REMOTE });
    for (const m of [a, b]) await m.login(rig.server);
    const ids = [plantSession(a, 0, 1), plantSession(a, 1, 1)];
    await a.ok(['push', '--all', '--json']);
    await b.ok(['pull', '--all', '--json']);
    // Session 0: concurrent branches under the root, b's (pushed) the newer, a's the older. b's pull appends a's last,
    // so it needs a checkout marker under b's entry. Session 1: a's entry only (no marker), so the pull is a batched one.
    const aLine = branchLine(0, 's0-a', 1);
    const bytes = (s: string) => Buffer.byteLength(s);
    const before = statSync(fileOf(b, 0)).size + bytes(branchLine(0, 's0-b', 2)) + bytes(aLine);
    // b's entry padded so that the file with a's entry ends 40 bytes under a KiB boundary, a few KiB above the other
    // files the pull writes: with the file size limit there, the entries fit and the marker does not (EFBIG).
    const limit = Math.ceil((before + 4096) / 1024) * 1024;
    appendFileSync(fileOf(b, 0), branchLine(0, 's0-b', 2, limit - 40 - before));
    await b.ok(['push', '--all', '--json']);
    appendFileSync(fileOf(a, 0), aLine);
    appendFileSync(fileOf(a, 1), branchLine(1, 's1-a', 1));
    await a.ok(['push', '--all', '--json']);

    const limited = (argv: string[]) => ['bash', '-c', `trap "" XFSZ; ulimit -f ${limit / 1024}; exec "$@"`, 'limited', ...argv];
    const r = await b.run(['pull', '--all', '--json'], { wrap: limited });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/EFBIG/);
    const cut = readLog(b.fileOf(ids[0]!));
    expect(cut.ids.at(-1), 'a\'s entry written, the marker not').toBe('s0-a');

    await b.ok(['pull', '--all', '--json']);
    const file = b.fileOf(ids[0]!);
    const log = readLog(file);
    expect(log.entries.at(-1)!.customType, 'a checkout marker went last').toBe(CHECKOUT_CUSTOM_TYPE);
    expect(log.entries.at(-1)!.parentId, 'under the newest tip, b\'s entry').toBe('s0-b');
    const pi = plain(piView(file));
    expect(pi.branch.at(-2), 'pi resumes b\'s branch').toBe('s0-b');
    expect(plain(await sessyncView(file)), 'sessync resumes the same').toEqual(pi);
    expect(readLog(b.fileOf(ids[1]!)).ids.at(-1)).toBe('s1-a');
  }, 120_000);
});
