// `sessync share` of a Claude Code session whose last line has no newline yet (Claude Code may be writing it, real CLI
// on a real serve): the share goes without that line, says so on stderr and in --json, and the file is not touched.
import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { ClaudeMachine, turn } from './claude-rig.js';

const SESSION = '7c7c7c7c-1111-4222-8333-444444444444';
const HALF = '{"type":"user","uuid":"d3333333-3333-4333-8333-333333333333","parentUuid":"d2222222-2222-4222-8222-222222222222","message":{"role":"user","content":"half';

describe('share of a Claude Code session with an unended last line', () => {
  const rig = useServer(undefined, 'sessync-cc-torn-share-');

  it('shares the ended lines, notes the unended one (stderr, --json notes), and writes nothing to the file', async () => {
    const a = new ClaudeMachine(rig.root, 'sharer');
    await a.login(rig.server);
    const path = a.write(`${SESSION}.jsonl`, turn(SESSION, realpathSync(a.project), null, 'a question', ['d1111111-1111-4111-8111-111111111111', 'd2222222-2222-4222-8222-222222222222'], '2026-01-01T00:00:00.000Z'));
    appendFileSync(path, HALF);
    const before = readFileSync(path);

    const json = await a.run(['share', SESSION.slice(0, 8), '--json', '--agent', 'claude-code']);
    expect(json.code, json.stderr).toBe(0);
    const out = json.json() as { entryCount: number; notes?: string[] };
    expect(out.entryCount).toBe(2);
    expect(out.notes, 'the unended line is said in --json').toEqual([expect.stringContaining(`the last line of ${path} has no newline yet`)]);
    expect(out.notes![0]).toContain('not part of the share');

    const text = await a.run(['share', SESSION.slice(0, 8), '--agent', 'claude-code']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain(`note: the last line of ${path} has no newline yet (Claude Code may be writing it)`);
    expect(readFileSync(path).equals(before), 'the agent\'s file is never written').toBe(true);

    // Once Claude Code ends the line, it is shared, with no note.
    appendFileSync(path, '"}}\n');
    const ended = await a.run(['share', SESSION.slice(0, 8), '--json', '--agent', 'claude-code']);
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.json()).toMatchObject({ entryCount: 3 });
    expect((ended.json() as { notes?: string[] }).notes).toBeUndefined();
  });
});
