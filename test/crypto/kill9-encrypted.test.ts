// kill -9 during encrypted push and pull: a batch sealed and written down before a kill is resent as the same bytes
// (never sealed again under a new nonce, which the server would refuse as another batch at that seq); both converge.
import { describe, expect, it, onTestFinished } from 'vitest';
import { entrySet, readLog, startNodeServer, useServer } from '../sync/helpers.js';
import { pendingLeft, runAndKill, slowProxy } from '../sync/kill-rig.js';
import { encryptedPair } from './crypto-rig.js';

const RUNS = 6;

describe('kill -9 on an encrypted account', () => {
  const rig = useServer(startNodeServer, 'sessync-e2ekill-');

  it(`converges after ${RUNS * 2} random SIGKILLs of sync`, async () => {
    const proxy = await slowProxy(rig.server.url);
    onTestFinished(() => proxy.close());
    // Small batches: a small session becomes several sealed batches, so kills land between them too.
    const { a, b } = await encryptedPair(rig.root, { ...rig.server, url: proxy.url }, ['k1', 'k2'], { SESSYNC_SYNC_BATCH_BYTES: '600' });
    const id = await a.newSession();
    const outcomes = { killed: 0, finished: 0, pendingAfterKill: 0 };
    for (let run = 0; run < RUNS; run++) {
      await a.say(id, ...Array.from({ length: 4 }, (_, i) => `run ${run} entry ${i} ${'x'.repeat(200)}`));
      if (run > 0) await b.say(id, `b says ${run}`);
      outcomes[await runAndKill(a, ['sync'], 300 + Math.random() * 1200)]++;
      if (pendingLeft(a)) outcomes.pendingAfterKill++;
      outcomes[await runAndKill(b, ['sync'], 300 + Math.random() * 1200)]++;
      if (pendingLeft(b)) outcomes.pendingAfterKill++;
      for (const m of [a, b, a, b]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
      const fa = a.fileOf(id);
      const fb = b.fileOf(id);
      expect(new Set(readLog(fa).ids).size).toBe(readLog(fa).ids.length);
      expect(entrySet(fb), `after run ${run}`).toEqual(entrySet(fa));
    }
    console.log(`encrypted kill -9: ${outcomes.killed} killed, ${outcomes.finished} finished first, ${outcomes.pendingAfterKill} left a sealed batch pending`);
    expect(outcomes.killed).toBeGreaterThan(0);
  }, 240_000);
});
