// A conflicts file left named by a first pull killed before its folder's fsync gets that fsync from the retry (and the
// folder's own name its fsync in the server's state folder), before the cursor past its entries is saved (strace of
// the real CLI; skipped without strace).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLog, useServer } from './helpers.js';
import { clashingPair } from './conflict-pair.js';
import { hasStrace, tracedRun } from './kill-rig.js';
import { sessionsClaimed } from './traced-states.js';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.skipIf(!hasStrace())('conflicts file left by a killed first pull (strace of the real CLI; skipped without strace)', () => {
  const rig = useServer(undefined, 'sessync-conf-name-');
  // What a first pull leaves when killed -9 before setAside's folder fsync: no file yet (folder made), the file
  // opened with 'ax' and empty, or the file written and fsynced. No cursor saved in any of them.
  for (const variant of ['none', 'empty', 'full'] as const) {
    it(`left ${variant}: the retry fsyncs the conflicts folder before it writes the session's cursor`, async () => {
      const R = `git@github.com:acme/conflict-name-${variant}.git`;
      const { a, b, id, clash } = await clashingPair(rig.root, [`a-${variant}`, `b-${variant}`], R, rig.server);
      const dir = join(b.serverState(), 'conflicts');
      mkdirSync(dir, { recursive: true });
      const p = join(dir, `${id}.jsonl`);
      const entryA = readLog(a.fileOf(id)).entries.find((e) => e.id === clash)!;
      if (variant !== 'none') writeFileSync(p, variant === 'empty' ? '' : JSON.stringify({ id: clash, host: null, detected: new Date().toISOString(), kept: 'local', entry: entryA }) + '\n');

      // The cursor b holds before the retry: the pull's note of its request under way carries it, and claims nothing.
      const before = new Map([[id, (await b.syncState(id))!.cursor]]);
      const trace = join(rig.root, `conf-${variant}.strace`);
      const run = await tracedRun(b, ['pull'], trace, { calls: 'fsync,fdatasync,write,writev', strings: 1_000_000 });
      expect(run.code, run.err).toBe(0);
      expect(JSON.parse(run.out).conflicts, run.out).toBe(1);
      expect(existsSync(p)).toBe(true);
      expect(readFileSync(p, 'utf8').split('\n').filter(Boolean)).toHaveLength(1); // once, whatever the first try left

      const t = readFileSync(trace, 'utf8').split('\n');
      const folderSync = t.findIndex((l) => new RegExp(`\\bf(data)?sync\\(\\d+<${escape(dir)}>`).test(l));
      // The session's state (its cursor past the clash) is written into the journal, the pack or its own file.
      const cursorWrite = t.findIndex((l) => /\b(write|writev)\(\d+<[^>]*(push-journal\.jsonl|state-pack|\/sessions\/[^/>]+\.json)/.test(l) && sessionsClaimed(l, [id], before).length > 0);
      expect(cursorWrite, 'the session state written').toBeGreaterThanOrEqual(0);
      expect(folderSync, 'an fsync of the conflicts folder').toBeGreaterThanOrEqual(0);
      // Durable in order: the journal's first fsync after the folder's, or the folder's before the state's write.
      const stateSyncAfter = t.findIndex((l, n) => n >= cursorWrite && /\bf(data)?sync\(\d+<[^>]*(push-journal\.jsonl|state-pack|\/sessions\/[^/>]+\.json)/.test(l));
      expect(stateSyncAfter, 'the state fsynced').toBeGreaterThanOrEqual(0);
      expect(folderSync, 'conflicts folder fsynced before the state is durable').toBeLessThan(stateSyncAfter);
      // The conflicts folder was found there (its name maybe never fsynced either): its name in the server's state
      // folder is made durable too, and no higher (that folder holds the cursor: a name lost above it takes both).
      const parentSync = t.findIndex((l) => new RegExp(`\\bf(data)?sync\\(\\d+<${escape(b.serverState())}>`).test(l));
      expect(parentSync, 'an fsync of the conflicts folder\'s parent').toBeGreaterThanOrEqual(0);
      expect(parentSync, 'before the state is durable').toBeLessThan(stateSyncAfter);
      expect(t.some((l) => new RegExp(`\\bf(data)?sync\\(\\d+<${escape(dirname(b.serverState()))}>`).test(l)), 'nothing above it').toBe(false);
    }, 90_000);
  }
});
