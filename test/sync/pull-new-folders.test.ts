// A pull into an empty machine makes the sessions root and project folders: every new folder's name is fsynced in
// its parent (up to the folder that was there) before any cursor of a session under it is written (strace of the CLI).
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, plantSession, readLog, startNodeServer, useServer } from './helpers.js';
import { hasStrace, tracedRun } from './kill-rig.js';
import { sessionsClaimed } from './traced-states.js';

/** What a trace says of the names a pull made and the cursors written after them. */
export interface NameOrder {
  /** Folders the run made (mkdir that returned 0), in order. */
  made: string[];
  /** Session files linked into place. */
  linked: number;
  /** Completed fsyncs per folder. */
  folderFsyncs: Map<string, number>;
  /** Cursor writes that came before a name they need was durable: `session: what was missing`. */
  uncovered: string[];
}

/**
 * Reads a `strace -f -y` trace of mkdir, link, fsync and write calls. A call cut by another thread's
 * (`<unfinished ...>`, then `<... x resumed>`) begins at its first half and completes at its second. An fsync of a
 * folder covers the names made in it that completed before the fsync began. A write of a cursor file (journal, pack,
 * own state file) that names a session needs: its file linked, an fsync of the file's folder begun after the link,
 * and for every folder the run made on the way from the file up, an fsync of that folder's parent begun after it was made.
 */
export function nameOrder(trace: string, home: string, files: ReadonlyMap<string, string>): NameOrder {
  const out: NameOrder = { made: [], linked: 0, folderFsyncs: new Map(), uncovered: [] };
  const madeAt = new Map<string, number>();
  const linkedAt = new Map<string, number>();
  /** Per folder, when each of its completed fsyncs began. */
  const synced = new Map<string, number[]>();
  const open = new Map<string, { kind: 'mkdir' | 'link' | 'fsync'; at: number; arg: string }>();
  const idOf = (line: string) => [...files.keys()].find((id) => line.includes(`_${id}.jsonl"`));
  const done = (kind: 'mkdir' | 'link' | 'fsync', began: number, at: number, arg: string) => {
    if (kind === 'mkdir') {
      out.made.push(arg);
      madeAt.set(arg, at);
    } else if (kind === 'link') {
      linkedAt.set(arg, at);
      out.linked++;
    } else {
      const s = synced.get(arg) ?? [];
      s.push(began);
      synced.set(arg, s);
      out.folderFsyncs.set(arg, (out.folderFsyncs.get(arg) ?? 0) + 1);
    }
  };
  const syncedAfter = (dir: string, at: number) => (synced.get(dir) ?? []).some((b) => b > at);
  readFileSync(trace, 'utf8').split('\n').forEach((line, at) => {
    const pid = line.split(' ', 1)[0]!;
    const resumed = /<\.\.\. (\w+) resumed>.*= (-?\d+)/.exec(line);
    if (resumed) {
      const call = open.get(pid);
      open.delete(pid);
      if (call && resumed[2] === '0') done(call.kind, call.at, at, call.arg);
      return;
    }
    let kind: 'mkdir' | 'link' | 'fsync' | null = null;
    let arg = '';
    const mk = /\bmkdir(?:at)?\((?:AT_FDCWD(?:<[^>]*>)?, )?"([^"]+)"/.exec(line);
    const fs = /\b(?:fsync|fdatasync)\(\d+<([^>]+)>/.exec(line);
    if (mk && mk[1]!.startsWith(home)) [kind, arg] = ['mkdir', mk[1]!];
    else if (fs) [kind, arg] = ['fsync', fs[1]!];
    else if (/\blink(?:at)?\(/.test(line)) {
      const id = idOf(line);
      if (id) [kind, arg] = ['link', id];
    } else if (/\b(write|writev|pwrite64)\(\d+</.test(line) && CURSOR_FILE.test(line)) {
      // A session's note of the pull request under way, written before its file is made, claims no file yet.
      const claimed = new Set(sessionsClaimed(line, [...files.keys()]));
      for (const [id, file] of files) {
        if (!claimed.has(id)) continue;
        const l = linkedAt.get(id);
        if (l === undefined) out.uncovered.push(`${id}: file not linked yet`);
        else if (!syncedAfter(dirname(file), l)) out.uncovered.push(`${id}: ${dirname(file)} not fsynced since the link`);
        for (const [dir, m] of madeAt) {
          if (file.startsWith(dir + '/') && !syncedAfter(dirname(dir), m)) out.uncovered.push(`${id}: new folder ${dir} not fsynced in ${dirname(dir)}`);
        }
      }
      return;
    }
    if (!kind) return;
    if (line.includes('<unfinished ...>')) open.set(pid, { kind, at, arg });
    else if (/= 0$/.test(line.trim())) done(kind, at, at, arg);
  });
  return out;
}

/** Where a session's cursor is written down: the journal, the pack (its temp file) or the session's own state file. */
const CURSOR_FILE = /\((\d+)<[^>]*(push-journal\.jsonl|state-pack\.jsonl[^/>]*|\/sessions\/[^/>]+\.json[^/>]*)>/;

const CALLS = 'mkdir,mkdirat,fsync,fdatasync,link,linkat,write,writev,pwrite64';

describe.skipIf(!hasStrace())('new folders of a pull into an empty machine (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(startNodeServer, 'sessync-pull-new-folders-');

  it('a pull that makes the sessions root and two project folders fsyncs each new name before any cursor under it is written', async () => {
    const remote = 'git@github.com:acme/pull-new-folders.git';
    const a = new Machine(rig.root, 'a', { remote });
    // pi set up (its folder there, as pi makes it on its first run) but no sessions folder yet: the sessions root and
    // the project folders are made by the pull. A folder named by SESSYNC_SESSIONS_DIR must exist, so pi's is used.
    const agentDir = join(rig.root, 'b', 'pi', 'agent');
    mkdirSync(agentDir, { recursive: true });
    const sessions = join(agentDir, 'sessions');
    const b = new Machine(rig.root, 'b', { remote, env: { PI_CODING_AGENT_DIR: agentDir } });
    const other = new Machine(rig.root, 'a2', { remote: 'git@github.com:acme/pull-new-folders-2.git' }); // a second project
    for (const m of [a, other, b]) await m.login(rig.server);
    await b.ok(['pull', '--all', '--json']); // the host id and the state folders, before the traced run
    const ids = Array.from({ length: 12 }, (_, n) => plantSession(n < 6 ? a : other, n, 20));
    await a.ok(['push', '--all', '--json']);
    await other.ok(['push', '--all', '--json']);

    const trace = join(rig.root, 'pull.strace');
    const run = await tracedRun(b, ['pull', '--all'], trace, { calls: CALLS, strings: 1_000_000 });
    expect(run.code, run.err).toBe(0);
    expect((JSON.parse(run.out) as { createdSessions: number }).createdSessions).toBe(ids.length);

    const files = new Map(ids.map((id) => [id, b.fileOf(id, sessions)]));
    const s = nameOrder(trace, join(rig.root, 'b'), files);
    const projects = new Set([...files.values()].map((f) => dirname(f)));
    const folders = [...s.folderFsyncs].filter(([d]) => s.made.includes(d) || s.made.some((m) => dirname(m) === d));
    console.log(`made ${s.made.map((d) => d.slice(rig.root.length)).join(', ')}; ${s.linked} linked; folder fsyncs: ${folders.map(([d, n]) => `${d.slice(rig.root.length)} ${n}`).join(', ')}`);
    expect(projects.size, 'two project folders').toBe(2);
    expect(s.linked).toBe(ids.length);
    for (const d of [sessions, ...projects]) expect(s.made, `${d} made by the pull`).toContain(d);
    // The guarantee: no cursor is written before its file, its folder and every new folder above it can be found.
    expect(s.uncovered, 'cursors written before a name they need was durable').toEqual([]);
    // One fsync per new folder in its parent (sessions holds two new names: still one or two, not one per file).
    expect(s.folderFsyncs.get(agentDir) ?? 0, 'the folder that was there').toBe(1);
    expect(s.folderFsyncs.get(sessions) ?? 0).toBeLessThanOrEqual(2);

    for (const id of ids.slice(0, 2)) expect(readLog(files.get(id)!).ids).toHaveLength(20);
    expect(((await b.ok(['pull', '--all', '--json'])) as { pulledEntries: number }).pulledEntries).toBe(0);
  }, 120_000);
});
