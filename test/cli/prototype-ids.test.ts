// Entry ids, field names and command names that are Object.prototype names are ordinary ids, fields and unknown commands.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSession } from '../../shared/jsonl.js';
import { SessionTree } from '../../shared/tree.js';
import { readTailState } from '../../cli/store/tail-state.js';
import { useTempHome } from '../helpers/cli.js';
import { cliEnv, lines, type CliEnv } from './cli-env.js';

const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' }) + '\n';
const entry = (id: string, parentId: string | null, s: number) =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString(), message: { role: 'user', content: id } }) + '\n';

describe('the append cache (tail state) with prototype-named entry ids', () => {
  const home = useTempHome('sessync-proto-tail-', { beforeEach, afterEach });

  for (const name of ['toString', 'constructor', 'valueOf', 'hasOwnProperty']) {
    it(`a child that arrives before its parent "${name}" keeps "${name}" from being a tip`, async () => {
      const file = join(home.dir, `${name}.jsonl`);
      // The parent comes last and is the newest: were it counted as a tip, it would be the leaf.
      writeFileSync(file, HEADER + entry('root', null, 1) + entry('kid', name, 2) + entry(name, 'root', 9));
      const tree = SessionTree.from(parseSession(readFileSync(file, 'utf8')).entries);
      expect(tree.leafId).toBe('kid');
      expect((await readTailState(file)).leafId).toBe('kid');
      // The saved cache, read back, still agrees after one more line.
      writeFileSync(file, readFileSync(file, 'utf8') + entry('next', 'kid', 10));
      expect((await readTailState(file)).leafId).toBe('next');
    });
  }

  it('an entry called __proto__ can be the leaf', async () => {
    const file = join(home.dir, 'proto.jsonl');
    writeFileSync(file, HEADER + entry('root', null, 1) + entry('__proto__', 'root', 2));
    expect((await readTailState(file)).leafId).toBe('__proto__');
    expect((await readTailState(file)).leafId).toBe('__proto__');
  });
});

describe('the CLI with prototype names', () => {
  let t: CliEnv;
  beforeEach(() => {
    t = cliEnv();
  });
  afterEach(() => t.cleanup());

  it('append keeps fields called constructor, toString and __proto__ as they were given', async () => {
    const { id, path } = await t.json<{ id: string; path: string }>(['new']);
    const line = '{"type":"custom","customType":"x","data":1,"constructor":"c","toString":{"t":1},"__proto__":{"p":[1,2]}}';
    await t.json(['append', id], line + '\n');
    const written = JSON.parse(lines(path).at(-1)!) as Record<string, unknown>;
    expect(Object.keys(written)).toEqual(['type', 'id', 'parentId', 'timestamp', 'customType', 'data', 'constructor', 'toString', '__proto__']);
    expect(lines(path).at(-1)).toContain('"constructor":"c","toString":{"t":1},"__proto__":{"p":[1,2]}');
    // And the session still reads back with that entry as its leaf.
    const log = await t.json<{ entries: { id: string }[] }>(['log', id]);
    expect(log.entries.at(-1)!.id).toBe(written.id);
  });

  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    it(`"sessync ${name}" is an unknown command (exit 2, a clear message), not a crash`, async () => {
      const r = await t.run([name, '--json']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`unknown command \\"${name}\\"`);
    });
  }
});
