// Each agent's status report names its agent (what `status` prints a block per agent from), in --json too (real CLI).
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { AllAgentsMachine, CLAUDE_SESSION, CODEX_SESSION, fixturesPresent } from './all-agents-rig.js';

if (!fixturesPresent) console.warn('Claude Code or Codex fixtures not found under ../shared/fixtures: the status agent test is skipped');

describe.skipIf(!fixturesPresent)('status: the report of each agent says which agent it is', () => {
  const root = tempDir('sessync-status-agent-');
  afterAll(() => root.cleanup());

  it('status --agent X --json says agent X, beside its sessions (offline: the local part)', async () => {
    const m = new AllAgentsMachine(root.dir, 'm');
    m.placeFixtures();
    const pi = await m.newSession();
    const want: Record<string, string> = { pi, 'claude-code': CLAUDE_SESSION, codex: CODEX_SESSION };
    for (const [agent, session] of Object.entries(want)) {
      const r = await m.run(['status', '--agent', agent, '--json']);
      const report = r.json();
      expect(report, r.stderr).toMatchObject({ agent, sessions: [{ session }] });
    }
  });

  it('status over several agents: each block names its agent, and --json gives each agent its figures and names none on top', async () => {
    const m = new AllAgentsMachine(root.dir, 'several');
    m.placeFixtures();
    await m.newSession();
    const text = await m.run(['status']);
    for (const agent of ['pi', 'claude-code', 'codex']) expect(text.stdout, text.stderr).toContain(`here (${agent}): 1 session(s)`);
    const r = await m.run(['status', '--json']);
    const report = r.json();
    expect(report.agent, r.stderr).toBeUndefined();
    expect(Object.keys(report.agents).sort()).toEqual(['claude-code', 'codex', 'pi']);
    for (const agent of ['pi', 'claude-code', 'codex']) expect(report.agents[agent]).toMatchObject({ sessions: 1 });
    expect(report.sessions).toHaveLength(3);
  });
});
