// A local line holding bytes that are not UTF-8 is pushed with U+FFFD in their place and reported as changed, never silently.
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Machine, readLog, useServer } from './helpers.js';

describe('a local line with bytes that are not UTF-8', () => {
  const rig = useServer(undefined, 'sessync-utf8-');

  it('is sent with U+FFFD for them and reported (offset, reason, in --json and as a note); another machine gets that text', async () => {
    const a = new Machine(rig.root, 'a');
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'before');
    const offset = statSync(a.fileOf(id)).size;
    // Written straight into the file, as a tool that copies bytes of a binary into a string could.
    const line = `{"type":"custom","customType":"bin","id":"bad-utf8","parentId":null,"timestamp":"${new Date().toISOString()}","data":"a`;
    appendFileSync(a.fileOf(id), Buffer.concat([Buffer.from(line), Buffer.from([0xff, 0xc3]), Buffer.from('b"}\n')]));
    const human = await a.run(['push']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout + human.stderr).toMatch(new RegExp(`line at byte ${offset} pushed changed: sent with U\\+FFFD`));
    // In --json too, with its offset (a second such line).
    const offset2 = statSync(a.fileOf(id)).size;
    appendFileSync(a.fileOf(id), Buffer.concat([Buffer.from(line.replace('bad-utf8', 'bad-utf8-2')), Buffer.from([0xfe]), Buffer.from('b"}\n')]));
    await a.say(id, 'after');
    const r = await a.run(['push', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().sessions[0].skippedLines).toEqual([{ offset: offset2, reason: expect.stringMatching(/sent with U\+FFFD in place of bytes that are not UTF-8/), sent: true }]);
    expect(await a.ok(['push', '--json'])).toMatchObject({ pushedEntries: 0, skippedLines: 0 });

    const b = new Machine(rig.root, 'b');
    await b.login(rig.server);
    await b.ok(['pull', '--all', '--json']);
    const got = readLog(b.fileOf(id)).entries;
    expect(got.map((e) => (e.type === 'custom' ? e.data : (e.message as { content: string }).content))).toEqual(['before', 'a\uFFFD\uFFFDb', 'a\uFFFDb', 'after']);
  }, 90_000);

  it('a file whose first line starts with a UTF-8 byte order mark is not pushed, and the reason names the mark', async () => {
    const a = new Machine(rig.root, 'bom');
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'hello');
    const file = a.fileOf(id);
    const before = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(file)]);
    writeFileSync(file, before);
    const r = await a.run(['push', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().skippedFiles).toEqual([{ path: file, reason: expect.stringMatching(/first line starts with a UTF-8 byte order mark \(bytes EF BB BF\).*remove those 3 bytes/) }]);
    expect(r.json()).toMatchObject({ pushedEntries: 0 });
    expect(readFileSync(file).equals(before)).toBe(true);
  }, 60_000);
});
