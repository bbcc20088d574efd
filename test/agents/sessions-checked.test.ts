// "N sessions checked" counts each session once, in its own agent's run: pi's, Claude Code's and Codex's add up to the
// total, in text and --json, for sync, pull and push, with and without --agent (real CLI, real `sessync serve`).
import { describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { AllAgentsMachine, fixturesPresent } from './all-agents-rig.js';

if (!fixturesPresent) console.warn('Claude Code or Codex fixtures not found under ../shared/fixtures: the sessions-checked tests are skipped');

const REMOTE = 'git@github.com:Acme/Checked.git';
const EACH = { pi: 2, 'claude-code': 1, codex: 1 };
const TOTAL = 4;

type Summary = { sessionsChecked: number; agents?: Record<string, { sessionsChecked: number }> };
const perAgent = (s: Summary) => Object.fromEntries(Object.entries(s.agents ?? {}).map(([a, x]) => [a, x.sessionsChecked]));

describe.skipIf(!fixturesPresent)('sessions checked, per agent and in all (real CLI)', () => {
  const rig = useServer(undefined, 'sessync-checked-');

  it('each session counts once, in its own agent, on the machine that has them all and on one that pulls them', async () => {
    const a = new AllAgentsMachine(rig.root, 'a', { remote: REMOTE });
    const b = new AllAgentsMachine(rig.root, 'b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    a.placeFixtures();
    for (const text of ['first', 'second']) await a.say(await a.newSession(), text);

    const first = (await a.ok(['sync', '--json'])) as Summary;
    expect(first).toMatchObject({ sessionsChecked: TOTAL, failed: 0 });
    // Now every session is on the server too: each agent's run sees the other agents' sessions there, not as its own.
    const again = (await a.ok(['sync', '--json'])) as Summary;
    expect(again.sessionsChecked).toBe(TOTAL);
    expect(perAgent(again)).toEqual(EACH);
    expect(await a.ok(['sync'])).toMatch(new RegExp(`^sync: ${TOTAL} sessions checked;`, 'm'));
    for (const mode of ['pull', 'push']) {
      const all = (await a.ok([mode, '--json'])) as Summary;
      expect(all.sessionsChecked, mode).toBe(TOTAL);
      expect(perAgent(all), mode).toEqual(EACH);
      for (const [agent, n] of Object.entries(EACH)) {
        expect(((await a.ok([mode, '--agent', agent, '--json'])) as Summary).sessionsChecked, `${mode} --agent ${agent}`).toBe(n);
        expect(await a.ok([mode, '--agent', agent]), `${mode} --agent ${agent}`).toMatch(new RegExp(`^${mode}: ${n} sessions? checked;`, 'm'));
      }
    }

    // A machine with none of them yet: each run pulls its own agent's sessions, and counts only those.
    const pulled = (await b.ok(['sync', '--json'])) as Summary;
    expect(pulled).toMatchObject({ sessionsChecked: TOTAL, createdSessions: TOTAL, failed: 0 });
    expect(perAgent(pulled)).toEqual(EACH);
    expect(((await b.ok(['pull', '--agent', 'claude-code', '--json'])) as Summary).sessionsChecked).toBe(1);
  });

});

// Its own server: the fixtures' session ids are the same in both.
describe.skipIf(!fixturesPresent)('sessions checked by a pull for one agent (real CLI)', () => {
  const rig = useServer(undefined, 'sessync-checked-one-');

  it('a machine where only the server has the project\'s sessions: a pull for one agent counts that agent\'s', async () => {
    const a = new AllAgentsMachine(rig.root, 'only-a', { remote: 'git@github.com:Acme/OnlyThere.git' });
    const b = new AllAgentsMachine(rig.root, 'only-b', { remote: 'git@github.com:Acme/OnlyThere.git' });
    await a.login(rig.server);
    await b.login(rig.server);
    a.placeFixtures();
    for (const text of ['first', 'second']) await a.say(await a.newSession(), text);
    expect(await a.ok(['push', '--json'])).toMatchObject({ sessionsChecked: TOTAL, failed: 0 });
    for (const [agent, n] of Object.entries(EACH)) {
      expect(await b.ok(['pull', '--agent', agent, '--json']), agent).toMatchObject({ sessionsChecked: n, createdSessions: n });
    }
  });
});
