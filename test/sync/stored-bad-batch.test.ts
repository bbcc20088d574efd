// Damaged batches an older server stored (a line nested 100,000 deep, a line that is not JSON, a body that fails its
// sha-256) are skipped and named by host and seq, the good batches after them merged, the other sessions untouched.
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FsStore } from '../../worker/store/fs-store.js';
import { BLOBS_DIR } from '../../worker/local-server.js';
import { keys } from '../../shared/keys.js';
import type { BatchProblem as Problem } from '../../cli/sync/session-sync-state.js';
import { Machine, readLog, useServer, type TestServer } from './helpers.js';

const OLD_HOST = 'old-host-1';
const DEEP = 100_000;

/** One entry line, parented on `parent`. */
function entryLine(id: string, parent: string, text: string): string {
  return JSON.stringify({ type: 'message', id, parentId: parent, timestamp: new Date().toISOString(), message: { role: 'user', content: text } });
}

/**
 * Writes batch `seq` of OLD_HOST straight into the server's file store, with its head, as an older server that
 * checked nothing would have: the routes (and whatever they validate today) are bypassed.
 */
async function plant(server: TestServer, session: string, seq: number, lines: string[], o: { badSha?: boolean } = {}): Promise<void> {
  const account = await accountOf(server);
  const body = lines.join('\n') + '\n';
  const sha = createHash('sha256').update(o.badSha ? body + 'x' : body, 'utf8').digest('hex');
  const batchId = randomUUID();
  const envelope = { session, host: OLD_HOST, seq, batchId, entryCount: lines.length, sha256: sha, encoding: 'jsonl' };
  const store = new FsStore(join(server.dataDir!, BLOBS_DIR));
  const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  expect(await store.putIfAbsent(keys.batch(account, session, OLD_HOST, seq), enc({ envelope, body }))).toBe(true);
  expect(await store.putIfAbsent(keys.head(account, session, OLD_HOST, seq), enc({ seq, batchId }))).toBe(true);
}

const texts = (path: string) => readLog(path).entries.map((e) => (e.message as { content: string }).content);

describe('damaged batches stored by an older server', () => {
  const rig = useServer(undefined, 'sessync-poison-');

  it('are reported for their session by pull --all, pull <ref> and sync; the good batches after them and other sessions are merged', async () => {
    const a = new Machine(rig.root, 'a');
    await a.login(rig.server);
    const poisoned = await a.newSession();
    await a.say(poisoned, 'a first');
    const healthy = await a.newSession();
    await a.say(healthy, 'healthy one', 'healthy two');
    await a.ok(['push', '--json']);
    const last = readLog(a.fileOf(poisoned)).ids.at(-1)!;

    // seq 1: good, 100,000 deep, not JSON, good; seq 2: a body that fails its sha-256; seq 3: good.
    await plant(rig.server, poisoned, 1, [entryLine('old-1', last, 'old one'), `{"type":"custom","id":"deep-1","parentId":"old-1","timestamp":"2026-01-01T00:00:00.000Z","data":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`, '{"type":"message", this is not JSON', entryLine('old-2', 'old-1', 'old two')]);
    await plant(rig.server, poisoned, 2, [entryLine('old-3', 'old-2', 'old three (damaged batch)')], { badSha: true });
    await plant(rig.server, poisoned, 3, [entryLine('old-4', 'old-2', 'old four')]);

    const b = new Machine(rig.root, 'b');
    await b.login(rig.server);
    const r = await b.run(['pull', '--all', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const sum = r.json();
    expect(sum).toMatchObject({ failed: 0, damagedBatches: 1, skippedLines: 2, createdSessions: 2 });
    const out = sum.sessions.find((s: { session: string }) => s.session === poisoned);
    expect(out.error).toBeUndefined();
    const probs = out.badBatches as Problem[];
    expect(probs.map((p) => [p.host, p.seq, p.line ?? null])).toEqual([
      [OLD_HOST, 1, 2],
      [OLD_HOST, 1, 3],
      [OLD_HOST, 2, null],
    ]);
    expect(probs[0]!.reason).toMatch(/deeper than 64 levels/);
    expect(probs[1]!.reason).toMatch(/not JSON/);
    expect(probs[2]!.reason).toMatch(/sha-256/);
    expect(texts(b.fileOf(poisoned))).toEqual(['a first', 'old one', 'old two', 'old four']);
    expect(texts(b.fileOf(healthy))).toEqual(['healthy one', 'healthy two']);

    // Reported once: the cursor is past them, and the state keeps the record.
    const again = await b.run(['pull', '--all', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ failed: 0, damagedBatches: 0, skippedLines: 0, pulledEntries: 0 });
    expect(again.json().sessions.some((s: { badBatches?: unknown }) => s.badBatches)).toBe(false);
    const st = (await b.syncState(poisoned))!;
    expect(st.cursor[OLD_HOST]).toBe(3);
    expect((st.badBatches as Problem[]).map((p) => [p.seq, p.line ?? null])).toEqual([[1, 2], [1, 3], [2, null]]);
    // ...which status shows, so they are not forgotten once reported.
    const status = await b.ok(['status', '--all', '--json']);
    const row = status.sessions.find((x: { session: string }) => x.session === poisoned);
    expect((row.damaged as Problem[]).map((p) => [p.host, p.seq, p.line ?? null])).toEqual([[OLD_HOST, 1, 2], [OLD_HOST, 1, 3], [OLD_HOST, 2, null]]);
    expect(status.sessions.find((x: { session: string }) => x.session === healthy).damaged).toBeUndefined();
    expect(await b.ok(['status', '--all'])).toContain(`${poisoned}  0 to push; 3 damaged stored batch(es) or line(s) passed over`);

    // A later good batch still arrives, through sync, and nothing old is reported again.
    await plant(rig.server, poisoned, 4, [entryLine('old-5', 'old-4', 'old five')]);
    const s = await b.run(['sync', '--all', '--json']);
    expect(s.code, s.stderr).toBe(0);
    expect(s.json()).toMatchObject({ failed: 0, damagedBatches: 0, pulledEntries: 1 });
    expect(texts(b.fileOf(poisoned))).toEqual(['a first', 'old one', 'old two', 'old four', 'old five']);

    // Without --json the notes on stderr name them, and the summary line counts them.
    const h = new Machine(rig.root, 'h');
    await h.login(rig.server);
    const human = await h.run(['pull', '--all']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toContain(`session ${poisoned}: batch 2 of host ${OLD_HOST} skipped: its body does not match its sha-256`);
    expect(human.stderr).toContain(`session ${poisoned}: line 2 of batch 1 from host ${OLD_HOST} not merged: it nests JSON deeper than 64 levels`);
    expect(human.stdout).toMatch(/1 damaged stored batch skipped; 2 invalid lines skipped/);

    // Another machine meets them through pull <ref> and through sync: named the same way.
    for (const [name, args] of [['c', ['pull', poisoned, '--json']], ['d', ['sync', '--all', '--json']]] as const) {
      const m = new Machine(rig.root, name);
      await m.login(rig.server);
      const res = await m.run([...args]);
      expect(res.code, `${name}: ${res.stderr}`).toBe(0);
      const o = res.json().sessions.find((x: { session: string }) => x.session === poisoned);
      expect((o.badBatches as Problem[]).map((p) => [p.host, p.seq, p.line ?? null])).toEqual([[OLD_HOST, 1, 2], [OLD_HOST, 1, 3], [OLD_HOST, 2, null]]);
      expect(texts(m.fileOf(poisoned))).toEqual(['a first', 'old one', 'old two', 'old four', 'old five']);
    }
  }, 120_000);

  it('a session whose every stored batch is damaged, or whose header nests 3,000 deep, fails alone, again next run; the run goes on', async () => {
    const a = new Machine(rig.root, 'e');
    await a.login(rig.server);
    const fine = await a.newSession();
    await a.say(fine, 'fine');
    await a.ok(['push', '--json']);
    const header = (id: string) => ({ type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd: a.project });
    const lonely = randomUUID();
    await plantMeta(rig.server, lonely, header(lonely));
    await plant(rig.server, lonely, 1, [entryLine('l-1', 'x', 'lonely')], { badSha: true });
    const deepHead = randomUUID();
    // 3,000 deep: the server can still write it into an answer (100,000 deep makes today's server answer 500).
    await plantMeta(rig.server, deepHead, header(deepHead), `${'['.repeat(3000)}${']'.repeat(3000)}`);
    await plant(rig.server, deepHead, 1, [entryLine('h-1', 'x', 'under a deep header')]);

    const f = new Machine(rig.root, 'f');
    await f.login(rig.server);
    for (let run = 0; run < 2; run++) {
      const r = await f.run(['pull', '--all', '--json']);
      expect(r.code, r.stderr).toBe(1);
      const sessions = r.json().sessions as { session: string; error?: { code: string; message: string }; badBatches?: Problem[] }[];
      const lone = sessions.find((x) => x.session === lonely)!;
      expect(lone.error?.code).toBe('corrupt');
      expect(lone.error?.message).toMatch(/every batch the server holds is damaged \(batch 1 of host old-host-1: .*sha-256/);
      expect(lone.badBatches?.[0]).toMatchObject({ host: OLD_HOST, seq: 1 });
      const deep = sessions.find((x) => x.session === deepHead)!;
      expect(deep.error).toMatchObject({ code: 'corrupt', message: expect.stringMatching(/header nests JSON deeper than 64 levels/) });
      expect(r.json().failed).toBe(2);
      expect(texts(f.fileOf(fine))).toEqual(['fine']);
      expect(f.sessionFiles().some((p) => p.includes(lonely) || p.includes(deepHead))).toBe(false);
    }
  }, 120_000);
});

/** The session's meta (as the first push stores it), written straight into the file store. */
async function plantMeta(server: TestServer, session: string, header: Record<string, unknown>, extraText?: string): Promise<void> {
  const account = await accountOf(server);
  const store = new FsStore(join(server.dataDir!, BLOBS_DIR));
  // Written as text, so a test can nest the header as deep as it likes (JSON.stringify gives up near 5,000).
  const headerText = extraText === undefined ? JSON.stringify(header) : `${JSON.stringify(header).slice(0, -1)},"extra":${extraText}}`;
  const meta = `{"header":${headerText},"projectKey":"path:/nowhere","created":${JSON.stringify(new Date().toISOString())}}`;
  expect(await store.putIfAbsent(keys.sessionMeta(account, session), new TextEncoder().encode(meta))).toBe(true);
}

async function accountOf(server: TestServer): Promise<string> {
  const res = await fetch(`${server.url}/v1/whoami`, { headers: { authorization: `Bearer ${server.token}` } });
  return ((await res.json()) as { account: string }).account;
}
