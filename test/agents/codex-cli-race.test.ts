// The fork rule's race with the real Codex CLI as the client: A and B resume one session offline (B first, so its
// lines are the earlier), A's push reaches the server first, B's right after, and C syncs before either pulls.
import { describe, expect, it } from 'vitest';
import { codexNew, findCodex } from './codex-cli.js';
import { useCodexCli } from './codex-cli-rig.js';
import { convergeToOneFork, type CodexMachine } from './codex-rig.js';

const found = await findCodex();
const OURS = /^(?:(?:first|second|third) prompt on [ABC]|answer .+)$/;
if (found.bin === null) console.error(`\n*** The real Codex CLI cannot run on this machine: ${found.why}. The Codex race test is SKIPPED. ***\n`);

describe.skipIf(found.bin === null)('the real Codex CLI: continuations pushed at once, a third machine first to sync', () => {
  const t = useCodexCli(() => found.bin!, 'sessync-codexrace-cli-', OURS);

  it('A, B and C end with the same rollouts and bytes and one fork; each line of work resumes on C', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((n) => t.machine(n)) as [CodexMachine, CodexMachine, CodexMachine];
    for (const m of [a, b, c]) await m.login(t.server);
    t.api.replies.push('answer one from A');
    const id = await codexNew(found.bin!, t.on(a), 'first prompt on A');
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);

    await t.ask(b, id, 'second prompt on B', 'answer two on B');
    await t.ask(a, id, 'second prompt on A', 'answer two on A');
    const aOwn = a.text(id);
    const bOwn = b.text(id);
    expect(await a.ok(['push', '--json'])).toMatchObject({ failed: 0 });
    expect(await b.ok(['push', '--json'])).toMatchObject({ failed: 0 });

    expect((await c.run(['sync'])).code).toBe(0);
    const rb = await b.run(['sync']);
    expect(rb.code, rb.stderr).toBe(0);
    const told = new RegExp(`your work on this machine in session ${id} continues as session ([0-9a-f-]{36})`).exec(rb.stderr);
    expect(told, rb.stderr).not.toBeNull();
    const fork = told![1]!;
    await convergeToOneFork([a, c, a, b, c], id, fork);
    expect(a.text(id)).toBe(aOwn);
    for (const l of bOwn.split('\n').slice(1)) expect(a.text(fork)).toContain(l);

    const start = ['user: first prompt on A', 'assistant: answer one from A'];
    expect(await t.ask(c, id, 'third prompt on C', 'answer three on C')).toEqual([...start, 'user: second prompt on A', 'assistant: answer two on A', 'user: third prompt on C']);
    expect(await t.ask(c, fork, 'third prompt on C', 'answer three on C')).toEqual([...start, 'user: second prompt on B', 'assistant: answer two on B', 'user: third prompt on C']);
  });
});
