// The Workers runtime (wrangler dev --local) killed and restarted on the same port and R2 dir mid-push and mid-pull: completes on retry.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import { Machine, entrySet, readLog, startWorkerdServer, useServer, type TestServer } from './helpers.js';
import { heads, until } from './kill-rig.js';



/** Waits until the server holds at least two batches of the session (some, not all, of a long push); returns the seq. */
function someBatchesStored(server: TestServer, session: string): Promise<number> {
  return until('a few batches on the server', 60_000, async () => {
    const h = (await heads(server)).find((x) => x.session === session);
    return h && h.seq >= 2 ? h.seq : undefined;
  }, 50);
}

/**
 * A writer with a session of `n` entries (~450 bytes each) pushed in batches of at most `batchBytes`, and a reader
 * with the same repository at another path under another URL form; both logged in.
 */
async function writerAndReader(root: string, server: TestServer, name: string, batchBytes: number, n: number, fill: string): Promise<{ a: Machine; b: Machine; id: string }> {
  const a = new Machine(root, `${name}-a`, { remote: `git@github.com:acme/${name}.git`, env: { SESSYNC_SYNC_BATCH_BYTES: String(batchBytes) } });
  const b = new Machine(root, `${name}-b`, { remote: `https://github.com/acme/${name}` });
  await a.login(server);
  await b.login(server);
  const id = await a.newSession();
  await a.say(id, ...Array.from({ length: n }, (_, i) => `${name} entry ${i} ${fill.repeat(420)}`));
  return { a, b, id };
}

/** `sessync <args>` as a child process of its own; `exited` gives its code and output. */
function start(m: Machine, args: string[]): { exited: Promise<{ code: number | null; out: string; err: string }> } {
  const child = spawn(process.execPath, [CLI_BIN, ...args, '--cwd', m.project], { cwd: REPO_ROOT, env: { ...process.env, ...m.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return { exited: new Promise((r) => child.once('exit', (code) => r({ code, out, err }))) };
}

/**
 * The interrupted run either rides out the restart with its own retries (exit 0), or gives up with a retryable
 * "unavailable" error after its backoff while wrangler is still starting: then a plain re-run must complete.
 * Either way the retry is what completes it; returns which one did, for the log.
 */
async function completeOnRetry(m: Machine, args: string[], first: { code: number | null; out: string; err: string }): Promise<'own retries' | 're-run'> {
  if (first.code === 0) {
    expect(first.err).toMatch(/cannot reach the sessync server.*retry 1/); // it did see the outage and said so
    return 'own retries';
  }
  expect(first.code, `unexpected exit; stderr:\n${first.err}`).toBe(1);
  expect(first.err).toMatch(/cannot reach the sessync server/);
  await m.ok([...args, '--json']);
  return 're-run';
}

function assertNoDuplicates(path: string): void {
  const ids = readLog(path).ids;
  expect(new Set(ids).size, `duplicate entry lines in ${path}`).toBe(ids.length);
}

describe('workerd (wrangler dev --local) restarted in the middle of a sync', () => {
  const rig = useServer(startWorkerdServer, 'sessync-restart-wd-');

  it('a push interrupted by killing the wrangler process group completes on retry, nothing lost or doubled', async () => {
    expect(rig.server.kind).toBe('workerd');
    const { a, b, id } = await writerAndReader(rig.root, rig.server, 'restart', 1500, 150, 'y');

    const run = start(a, ['push']);
    // Restart as soon as some batches, not all, are stored (the same port and --persist-to dir).
    const seqAtRestart = await someBatchesStored(rig.server, id);
    await rig.server.restart();
    const how = await completeOnRetry(a, ['push'], await run.exited);

    // The batches stored before the kill survived in the persisted R2 dir, and the rest followed.
    const final = (await heads(rig.server)).find((x) => x.session === id)!;
    expect(final.seq).toBeGreaterThan(seqAtRestart);
    const again = await a.ok(['push', '--json']);
    expect(again).toMatchObject({ pushedEntries: 0 });

    await b.ok(['pull', '--json']);
    assertNoDuplicates(b.fileOf(id));
    expect(readLog(b.fileOf(id)).ids).toHaveLength(150);
    expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    console.log(`workerd restart mid-push: ${seqAtRestart} batches stored at the kill, ${final.seq} in the end; completed by ${how}`);
  }, 180_000);

  it('a pull interrupted by killing the wrangler process group completes on retry, nothing lost or doubled', async () => {
    // One entry per batch: the pull takes several pages (40 batches each), so the kill lands between them.
    const N = 240;
    const { a, b, id } = await writerAndReader(rig.root, rig.server, 'restart-pull', 600, N, 'p');
    await a.ok(['push', '--json']);
    const seq = (await heads(rig.server)).find((x) => x.session === id)!.seq;
    expect(seq).toBeGreaterThan(80); // enough batches for more than two pull pages

    const run = start(b, ['pull']);
    // Kill the server once the first pages are in B's file (the cursor is saved only after they are fsynced).
    const landed = await until('the first pulled entries in the new file', 60_000, async () => {
      const f = b.sessionFiles().find((p) => p.endsWith(`_${id}.jsonl`));
      return f && existsSync(f) && readLog(f).ids.length > 0 ? readLog(f).ids.length : undefined;
    }, 20);
    await rig.server.restart();
    expect(landed, 'the pull had finished before the kill: nothing was interrupted').toBeLessThan(N);
    const how = await completeOnRetry(b, ['pull'], await run.exited);

    const bFile = b.fileOf(id);
    assertNoDuplicates(bFile);
    expect(readLog(bFile).ids).toHaveLength(N);
    expect([...entrySet(bFile).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    const again = await b.ok(['pull', '--json']);
    expect(again).toMatchObject({ pulledEntries: 0 });
    expect(readLog(bFile).ids).toHaveLength(N);
    console.log(`workerd restart mid-pull: ${landed} of ${N} entries in B's file at the kill; completed by ${how}`);
  }, 180_000);

  it('a push that gives up while the server is down says it is retryable; a re-run after the restart completes it', async () => {
    const { a, b, id } = await writerAndReader(rig.root, rig.server, 'down', 1500, 120, 'd');

    const run = start(a, ['push', '--json']);
    const seqAtStop = await someBatchesStored(rig.server, id);
    // Down for good (until the push has given up): every retry fails, the error is the retryable kind.
    await rig.server.stop();
    const first = await run.exited;
    expect(first.code).toBe(1);
    expect(JSON.parse(first.err.trim().split('\n').at(-1)!).error).toMatchObject({ code: 'unavailable', retryable: true });

    await rig.server.restart(); // same port, same --persist-to dir
    const done = await a.ok(['push', '--json']);
    // Only what the server did not have yet is sent again (a batch in flight at the kill may be resent, not more).
    expect(done.pushedEntries).toBeGreaterThan(0);
    expect(done.pushedEntries).toBeLessThan(120);
    await b.ok(['pull', '--json']);
    assertNoDuplicates(b.fileOf(id));
    expect(readLog(b.fileOf(id)).ids).toHaveLength(120);
    expect([...entrySet(b.fileOf(id)).entries()].sort()).toEqual([...entrySet(a.fileOf(id)).entries()].sort());
    console.log(`workerd down mid-push: ${seqAtStop} batches stored at the kill; the re-run pushed ${done.pushedEntries} of 120 entries`);
  }, 180_000);
});
