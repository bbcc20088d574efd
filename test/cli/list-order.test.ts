// list sorts by each session's newest entry time (as pi does), not by file mtime, so two machines list one order.
import { appendFileSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listSessions } from '../../cli/store/session-index.js';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { useTempHome } from '../helpers/cli.js';
import { cliEnv, msg, type CliEnv } from './cli-env.js';

const home = useTempHome('sessync-list-order-', { beforeEach, afterEach });
const CWD = '/projects/order-project';
const root = () => join(home.dir, 'home', 'sessions');

/** A session file as another machine's pull leaves it: entries with their own times, the file's mtime = now. */
function sessionFile(id: string, created: string, entryTimes: string[], opts: { bigLast?: number; tornTail?: boolean } = {}): string {
  const dir = projectDir(root(), CWD);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, sessionFileName(created, id));
  let text = JSON.stringify({ type: 'session', version: 3, id, timestamp: created, cwd: CWD }) + '\n';
  let parent: string | null = null;
  entryTimes.forEach((ts, i) => {
    const last = i === entryTimes.length - 1;
    const content = last && opts.bigLast ? 'x'.repeat(opts.bigLast) : `entry ${i}`;
    const e = { type: 'message', id: `${id}-${i}`, parentId: parent, timestamp: ts, message: { role: 'user', content, timestamp: Date.parse(ts) } };
    parent = e.id;
    text += JSON.stringify(e) + '\n';
  });
  if (opts.tornTail) text += '{"type":"message","id":"torn","parentId":null,"timestamp":"2030-01-01T00:00:00.000Z","mess';
  writeFileSync(path, text);
  return path;
}

const order = async () => (await listSessions({ root: root(), realCwd: CWD })).map((r) => r.id);

describe('list order', () => {
  it('newest entry first, whatever the files\' mtimes say (a pull on another machine sets them)', async () => {
    const old = sessionFile('sess-old', '2026-01-01T00:00:00.000Z', ['2026-01-01T00:00:01.000Z']);
    const busy = sessionFile('sess-busy', '2026-01-01T00:00:00.000Z', ['2026-01-01T00:00:01.000Z', '2026-03-01T10:00:00.000Z']);
    const mid = sessionFile('sess-mid', '2026-02-01T00:00:00.000Z', ['2026-02-01T00:00:05.000Z']);
    // mtimes in the opposite order: the oldest session was "pulled" last.
    utimesSync(busy, new Date('2026-04-01T00:00:00Z'), new Date('2026-04-01T00:00:00Z'));
    utimesSync(mid, new Date('2026-04-02T00:00:00Z'), new Date('2026-04-02T00:00:00Z'));
    utimesSync(old, new Date('2026-04-03T00:00:00Z'), new Date('2026-04-03T00:00:00Z'));
    expect(await order()).toEqual(['sess-busy', 'sess-mid', 'sess-old']);
    // Warm (summary cache) gives the same order, with the time it sorted by.
    const rows = await listSessions({ root: root(), realCwd: CWD });
    expect(rows.map((r) => [r.id, r.lastEntryAt])).toEqual([
      ['sess-busy', '2026-03-01T10:00:00.000Z'],
      ['sess-mid', '2026-02-01T00:00:05.000Z'],
      ['sess-old', '2026-01-01T00:00:01.000Z'],
    ]);
    // A new entry moves a session up, as soon as the file changes.
    appendFileSync(old, JSON.stringify({ type: 'message', id: 'late', parentId: 'sess-old-0', timestamp: '2026-05-01T00:00:00.000Z', message: { role: 'user', content: 'late' } }) + '\n');
    expect(await order()).toEqual(['sess-old', 'sess-busy', 'sess-mid']);
  });

  it('files past 4 KiB, a last line longer than the tail read, a torn tail, a header-only session', async () => {
    sessionFile('big', '2026-01-01T00:00:00.000Z', Array.from({ length: 200 }, (_, i) => `2026-01-0${1 + (i % 5)}T00:00:00.000Z`).concat(['2026-06-01T00:00:00.000Z']));
    sessionFile('long-last', '2026-01-01T00:00:00.000Z', ['2026-01-01T00:00:01.000Z', '2026-05-01T00:00:00.000Z'], { bigLast: 50_000 });
    sessionFile('torn', '2026-01-01T00:00:00.000Z', ['2026-04-01T00:00:00.000Z'], { tornTail: true });
    sessionFile('empty', '2026-03-01T00:00:00.000Z', []);
    expect(await order()).toEqual(['big', 'long-last', 'torn', 'empty']);
  });

  it('equal times: by id, the same on every machine', async () => {
    for (const id of ['b-sess', 'c-sess', 'a-sess']) sessionFile(id, '2026-01-01T00:00:00.000Z', ['2026-02-02T00:00:00.000Z']);
    expect(await order()).toEqual(['c-sess', 'b-sess', 'a-sess']);
  });
});

describe('list order through the CLI', () => {
  let t: CliEnv;
  beforeEach(() => {
    t = cliEnv();
  });
  afterEach(() => t.cleanup());

  it('sessions appended to by sessync (tail state) sort by their last entry, and list shows that entry\'s time', async () => {
    const first = (await t.json<{ id: string }>(['new'])).id;
    const second = (await t.json<{ id: string }>(['new'])).id;
    const line = (text: string, timestamp: string) => JSON.stringify({ ...msg('user', text), timestamp }) + '\n';
    await t.json(['append', first], line('newest', '2027-01-01T12:34:56.000Z'));
    await t.json(['append', second], line('older', '2026-06-01T00:00:00.000Z'));
    // second's file is the one written last (newest mtime); first has the newer entry.
    const rows = await t.json<{ id: string; lastEntryAt: string }[]>(['list']);
    expect(rows.map((r) => r.id)).toEqual([first, second]);
    expect(rows[0]!.lastEntryAt).toBe('2027-01-01T12:34:56.000Z');
    const human = (await t.run(['list'])).stdout.split('\n');
    expect(human[0]).toMatch(new RegExp(`^${first.slice(-8)}  `));
  });
});
