// Bad input to every local command: a clear error on stderr, a non-zero exit, and not one byte changed on disk.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, jsonl, msg, snapshot } from './cli-env.js';
import type { CliEnv } from './cli-env.js';

let t: CliEnv;
let s: { id: string; path: string };
let onBranch: string;
let offBranch: string;

beforeAll(async () => {
  t = cliEnv();
  s = await t.json(['new']);
  [onBranch, offBranch] = (await t.json(['append', s.id], jsonl([msg('user', 'A'), msg('assistant', 'B')]))).ids;
  await t.json(['checkout', s.id, onBranch!]);
  await t.json(['append', s.id], jsonl([msg('user', 'C')]));
  writeFileSync(join(t.dir, 'notes.txt'), 'not a session\n');
});
afterAll(() => t.cleanup());

/** Everything on disk except sessync's own caches (which a failed read may still refresh). */
function disk(): Map<string, string> {
  const all = snapshot(t.dir);
  for (const k of [...all.keys()]) if (k.startsWith('home/cache/')) all.delete(k);
  return all;
}

type Case = [name: string, args: () => string[], stdin: string | (() => string), stderr: RegExp, exit?: number];

const valid = JSON.stringify(msg('user', 'fine'));
const cases: Case[] = [
  ['new: --model without a slash', () => ['new', '--model', 'gpt'], '', /--model must look like PROVIDER\/MODEL/, 2],
  ['new: stray argument', () => ['new', 'extra'], '', /unexpected argument "extra"/, 2],
  ['new: --cwd that does not exist', () => ['new', '--cwd', join(t.dir, 'nope')], '', /does not exist/, 1],
  ['append: missing session', () => ['append', 'deadbeef'], valid + '\n', /no session matches "deadbeef"/, 1],
  ['append: no session argument', () => ['append'], valid + '\n', /missing <ref>/, 2],
  ['append: malformed JSON on line 2', () => ['append', s.id], `${valid}\n{"type":"message",\n`, /line 2: not valid JSON/, 2],
  ['append: unknown entry type', () => ['append', s.id], '{"type":"bogus","x":1}\n', /line 1: unknown entry type "bogus"/, 2],
  ['append: missing required field', () => ['append', s.id], '{"type":"model_change","provider":"p"}\n', /line 1: model_change entry: "modelId"/, 2],
  ['append: a bad line after good ones', () => ['append', s.id], `${valid}\n${valid}\n[1,2]\n`, /line 3: an entry must be a JSON object/, 2],
  ['append: empty stdin', () => ['append', s.id], '\n\n', /no entries on stdin/, 2],
  ['append: unknown --parent', () => ['append', s.id, '--parent', 'zzzzzzzz'], valid + '\n', /no parent entry "zzzzzzzz"/, 1],
  ['append: parentId not in the session', () => ['append', s.id], JSON.stringify({ ...msg('user', 'x'), parentId: 'nothere1' }) + '\n', /parentId nothere1 is not in this session/, 2],
  ['append: id already used', () => ['append', s.id], () => JSON.stringify({ ...msg('user', 'x'), id: onBranch }) + '\n', /is already used/, 2],
  ['append: explicit id the server would refuse', () => ['append', s.id], JSON.stringify({ ...msg('user', 'x'), id: 'bad id' }) + '\n', /line 1: message entry: "id": an entry id must start with a letter or digit/, 2],
  ['append: explicit id with a slash', () => ['append', s.id], JSON.stringify({ ...msg('user', 'x'), id: '../x' }) + '\n', /line 1: message entry: "id": an entry id/, 2],
  ['append: label on an entry not in the session', () => ['append', s.id], '{"type":"label","targetId":"nothere1","label":"l"}\n', /label targetId nothere1 is not in this session/, 2],
  ['append: compaction keeping from an entry not in the session', () => ['append', s.id], '{"type":"compaction","summary":"s","firstKeptEntryId":"nothere1","tokensBefore":1}\n', /compaction firstKeptEntryId nothere1 is not in this session/, 2],
  ['append: branch summary from an entry not in the session', () => ['append', s.id], '{"type":"branch_summary","summary":"s","fromId":"nothere1"}\n', /branch_summary fromId nothere1 is not in this session/, 2],
  ['list: stray argument', () => ['list', 'x'], '', /unexpected argument/, 2],
  ['list: unknown option', () => ['list', '--bogus'], '', /bogus/, 2],
  ['continue: no session in this project', () => ['continue', '--cwd', t.dir], '', /no session for/, 1],
  ['resume: missing session', () => ['resume', 'deadbeef'], '', /no session matches/, 1],
  ['resume: path that does not exist', () => ['resume', join(t.dir, 'no', 'such.jsonl')], '', /no session file at/, 1],
  ['resume: a file that is not a session', () => ['resume', join(t.dir, 'notes.txt')], '', /not a session file/, 1],
  ['context: missing session', () => ['context', 'deadbeef'], '', /no session matches/, 1],
  ['log: missing session', () => ['log', 'deadbeef'], '', /no session matches/, 1],
  ['tree: missing session', () => ['tree', 'deadbeef'], '', /no session matches/, 1],
  ['checkout: missing session', () => ['checkout', 'deadbeef', onBranch!], '', /no session matches/, 1],
  ['checkout: unknown entry', () => ['checkout', s.id, 'zzzzzzzz'], '', /no entry "zzzzzzzz"/, 1],
  ['checkout: entry missing', () => ['checkout', s.id], '', /missing <entry>/, 2],
  ['fork: missing session', () => ['fork', 'deadbeef'], '', /no session matches/, 1],
  ['fork: unknown --at', () => ['fork', s.id, '--at', 'zzzzzzzz'], '', /no entry "zzzzzzzz"/, 1],
  ['label: unknown entry', () => ['label', s.id, 'zzzzzzzz', 'text'], '', /no entry "zzzzzzzz"/, 1],
  ['label: text missing', () => ['label', s.id, onBranch!], '', /missing <text>/, 2],
  ['name: missing session', () => ['name', 'deadbeef', 'x'], '', /no session matches/, 1],
  ['name: text missing', () => ['name', s.id], '', /missing <text>/, 2],
  ['name: empty text', () => ['name', s.id, ''], '', /the name is empty/, 2],
  ['name: whitespace-only text', () => ['name', s.id, '  ', '\t'], '', /the name is empty/, 2],
  ['compact: --keep-from missing', () => ['compact', s.id, '--summary', 'x'], '', /--summary and --keep-from are required/, 2],
  ['compact: unknown --keep-from', () => ['compact', s.id, '--summary', 'x', '--keep-from', 'zzzzzzzz'], '', /no entry to keep from "zzzzzzzz"/, 1],
  ['compact: entry off the active branch', () => ['compact', s.id, '--summary', 'x', '--keep-from', offBranch!], '', /not on the active branch/, 2],
  ['migrate: path that does not exist', () => ['migrate', join(t.dir, 'no.jsonl')], '', /does not exist/, 1],
  ['migrate: a file that is not a session', () => ['migrate', join(t.dir, 'notes.txt')], '', /not a session file/, 1],
  ['doctor: missing session', () => ['doctor', 'deadbeef'], '', /no session matches/, 1],
];

describe('bad input to every command changes no file', () => {
  it.each(cases)('%s', async (_name, args, stdin, stderr, exit) => {
    const before = disk();
    const r = await t.run(args(), typeof stdin === 'function' ? stdin() : stdin);
    expect(r.stderr).toMatch(stderr);
    if (exit !== undefined) expect(r.code).toBe(exit);
    else expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(disk()).toEqual(before);
  });

  it('--json errors are one JSON object on stderr with a code', async () => {
    const r = await t.run(['append', s.id, '--json'], '{"type":"bogus"}\n');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr).error).toMatchObject({ code: 'bad_input', message: expect.stringContaining('line 1') });
  });
});
