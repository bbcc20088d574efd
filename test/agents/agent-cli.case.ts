// The second conformance body: the real agent CLI as the client against a fake model API on loopback. A session made on
// machine A is synced, pulled on B at another path and resumed there (the model request holds A's messages); then
// turns on both, synced both ways: every line on both machines, and the agent resumes both on the same branch.
import { realpathSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { Machine, TestServer } from '../sync/helpers.js';
import { lineSet } from './claude-rig.js';

/** A machine the agent runs on: sessync's home plus the agent's own folder. */
export interface CliMachine extends Machine {
  /** The text of the session's main file here. */
  sessionText(session: string): string;
  /** The agent's own leaf for the session here. */
  agentLeaf(session: string): string | null;
}

/** The one parameter: how to run this agent, and what its model was asked. */
export interface AgentCli<M extends CliMachine = CliMachine> {
  name: string;
  machine(root: string, name: string, remote: string): M;
  /** Queues the fake model's next answer. */
  reply(text: string): void;
  /** A new session with a first prompt; its id. */
  create(m: M, prompt: string): Promise<string>;
  resume(m: M, session: string, prompt: string): Promise<void>;
  /** The conversation the model got in the last request, as "role: text", the agent's own additions left out. */
  lastConversation(): string[];
}

/** Registers the body's test; `rig` gives the running sessync server and a temp root. */
export function agentCliConformance<M extends CliMachine>(cli: AgentCli<M>, rig: { server: TestServer; root: string }): void {
  it(`${cli.name}: create on A, resume on B at another path; turns on both converge, one branch for both`, async () => {
    const a = cli.machine(rig.root, 'a', 'git@github.com:Acme/Widget.git');
    const b = cli.machine(rig.root, 'b', 'https://github.com/Acme/Widget.git');
    await a.login(rig.server);
    await b.login(rig.server);

    cli.reply('answer one from A');
    const id = await cli.create(a, 'first prompt on A');
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 1 });
    expect(b.sessionText(id)).toBe(a.sessionText(id));
    expect(realpathSync(b.project)).not.toBe(realpathSync(a.project));

    cli.reply('answer two from B');
    await cli.resume(b, id, 'second prompt on B');
    expect(cli.lastConversation()).toEqual(['user: first prompt on A', 'assistant: answer one from A', 'user: second prompt on B']);

    // B's turn goes back to A; then each machine takes a turn of its own before they sync again.
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    cli.reply('answer three on A');
    await cli.resume(a, id, 'third prompt on A');
    cli.reply('answer three on B');
    await cli.resume(b, id, 'third prompt on B');
    const aOwn = a.sessionText(id);
    const bOwn = b.sessionText(id);
    for (const m of [a, b, a, b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    for (const m of [b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0 });

    const aText = a.sessionText(id);
    const bText = b.sessionText(id);
    expect(aText.startsWith(aOwn)).toBe(true); // appended, never rewritten
    expect(bText.startsWith(bOwn)).toBe(true);
    expect(new Set(lineSet(aText))).toEqual(new Set(lineSet(bText)));
    for (const l of [...lineSet(aOwn), ...lineSet(bOwn)]) {
      expect(aText.includes(l)).toBe(true);
      expect(bText.includes(l)).toBe(true);
    }
    expect(a.agentLeaf(id)).toBe(b.agentLeaf(id));

    // The real agent agrees: resumed on each machine, the model sees the same branch (B's turn, the newer one).
    cli.reply('check on A');
    await cli.resume(a, id, 'where are we');
    const fromA = cli.lastConversation();
    cli.reply('check on B');
    await cli.resume(b, id, 'where are we');
    expect(cli.lastConversation()).toEqual(fromA);
    expect(fromA.slice(0, -1)).toEqual([
      'user: first prompt on A',
      'assistant: answer one from A',
      'user: second prompt on B',
      'assistant: answer two from B',
      'user: third prompt on B',
      'assistant: answer three on B',
    ]);
  }, 180_000); // a dozen real agent and sessync runs: on a loaded machine they can take more than the default minute
}
