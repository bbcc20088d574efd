// A conflicts file whose last line has no '\n' (cut short, or edited by hand): the next record set aside by a real
// pull goes on a line of its own, the fragment is kept as its own line, and the pull says so.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from './helpers.js';
import { clashingPair } from './conflict-pair.js';

describe('a conflicts file ending in a torn line', () => {
  const rig = useServer(undefined, 'sessync-conf-torn-');
  // Half a record (a crash mid-write of an older sessync), and a whole record whose '\n' a hand edit removed.
  const old = JSON.stringify({ id: 'old-0001', host: null, detected: '2026-01-01T00:00:00.000Z', kept: 'local', entry: { type: 'message', id: 'old-0001', message: { role: 'user', content: 'old' } } });
  const fragments = { half: old.slice(0, 40), whole: old };
  for (const [variant, fragment] of Object.entries(fragments)) {
    it(`(${variant} record) is ended before the pull's record: every record parses, the fragment stays its own line`, async () => {
      const R = `git@github.com:acme/conflict-torn-${variant}.git`;
      const { b, id, clash } = await clashingPair(rig.root, [`a-${variant}`, `b-${variant}`], R, rig.server);
      const dir = join(b.serverState(), 'conflicts');
      mkdirSync(dir, { recursive: true });
      const p = join(dir, `${id}.jsonl`);
      writeFileSync(p, fragment); // no final '\n'

      // Without --json: the notes are printed on stderr.
      const r = await b.run(['pull']);
      expect(r.code, r.stderr).toBe(0);

      const text = readFileSync(p, 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      const lines = text.slice(0, -1).split('\n');
      expect(lines).toEqual([fragment, expect.any(String)]);
      const record = JSON.parse(lines[1]!);
      expect(record).toMatchObject({ id: clash, entry: { id: clash, message: { content: 'version A' } } });
      if (variant === 'whole') expect(JSON.parse(lines[0]!)).toMatchObject({ id: 'old-0001' });
      // Said, not silently mended.
      expect(r.stderr).toContain(`${p}: its last line had no line end`);

      // The next pull finds the file whole: nothing set aside twice, nothing more said about a torn line.
      const again = await b.run(['pull']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).not.toContain('had no line end');
      expect(readFileSync(p, 'utf8')).toBe(text);
    }, 90_000);
  }
});
