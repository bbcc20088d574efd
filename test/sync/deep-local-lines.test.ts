// A local line nested deeper than the server's limit is left out of the push with a note (the server would refuse
// the whole batch over it); the lines around it go; the CLI's own --json output copes with any depth.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/wire.js';
import { Machine, readLog, useServer } from './helpers.js';

/** A custom entry whose `data` nests `levels` arrays: the line itself is one level more. */
function nestedLine(id: string, levels: number): string {
  return `{"type":"custom","customType":"deep","id":"${id}","parentId":null,"timestamp":"${new Date().toISOString()}","data":${'['.repeat(levels)}${']'.repeat(levels)}}\n`;
}

describe('entries nested deeper than the limit, in a local file', () => {
  const rig = useServer(undefined, 'sessync-deep-');

  it('are skipped by push with a reason; the entry at the limit and the ones around them reach another machine', async () => {
    const a = new Machine(rig.root, 'a');
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'before');
    const max = LIMITS.maxJsonDepth;
    // Written straight into the file, as pi or another tool could.
    appendFileSync(a.fileOf(id), nestedLine('at-limit', max - 1) + nestedLine('one-over', max) + nestedLine('very-deep', 100_000));
    await a.say(id, 'after');
    const r = await a.run(['push', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ pushedEntries: 3, skippedLines: 2, failed: 0 });
    const reasons = (r.json().sessions[0].skippedLines as { reason: string }[]).map((s) => s.reason);
    expect(reasons).toEqual([`entry nests JSON deeper than ${max} levels, the server's limit`, `entry nests JSON deeper than ${max} levels, the server's limit`]);
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 0, skippedLines: 0 });

    const b = new Machine(rig.root, 'b');
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']);
    const got = readLog(b.fileOf(id));
    expect(got.entries.map((e) => (e.type === 'custom' ? e.id : (e.message as { content: string }).content))).toEqual(['before', 'at-limit', 'after']);
  }, 90_000);

  it('a session whose header nests deeper than the limit fails alone with a clear message; the other session is pushed', async () => {
    const a = new Machine(rig.root, 'h');
    await a.login(rig.server);
    const fine = await a.newSession();
    await a.say(fine, 'fine');
    const bad = await a.newSession();
    await a.say(bad, 'under a deep header');
    const file = a.fileOf(bad);
    const [header, ...rest] = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, [`${header!.slice(0, -1)},"extra":${'['.repeat(LIMITS.maxJsonDepth)}${']'.repeat(LIMITS.maxJsonDepth)}}`, ...rest].join('\n'));
    const r = await a.run(['push', '--json']);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({ pushedEntries: 1, failed: 1 });
    const out = r.json().sessions.find((s: { session: string }) => s.session === bad);
    expect(out.error).toMatchObject({ code: 'bad_input', message: expect.stringMatching(/header nests JSON deeper than 64 levels, the server's limit; this session cannot be pushed/) });
  }, 60_000);

  it('log --json and context --json of a session holding an entry 100,000 deep print it, not a stack overflow', async () => {
    const a = new Machine(rig.root, 'c');
    const id = await a.newSession();
    const deep = `{"type":"message","id":"deep-msg","parentId":null,"timestamp":"${new Date().toISOString()}","message":{"role":"user","content":[{"type":"text","text":"deep"}],"extra":${'['.repeat(100_000)}${']'.repeat(100_000)}}}\n`;
    appendFileSync(a.fileOf(id), deep);
    for (const cmd of ['log', 'context']) {
      const r = await a.run([cmd, id, '--json']);
      expect(r.code, `${cmd}: ${r.stderr.slice(0, 300)}`).toBe(0);
      expect(r.stdout).toContain('"extra":[[[[');
    }
  }, 60_000);
});
