// `sessync log <ref>`: the active branch, root to leaf, one line per entry.
import type { Command, CommandContext } from '../command.js';
import { positionals, unlessPathRef } from '../store/locate.js';
import { agentBranch, agentSessionOf, type AgentSession } from '../agents/agent-ref.js';
import { AGENTS } from '../../shared/agents/index.js';
import { openSessionView } from '../store/session-file-index-open.js';
import { describeEntry, labelsOf, shortTime } from '../format/describe-entry.js';
import { shortId } from '../format/short-id.js';

/** Another agent's session: its branch as that agent continues it, each line as the viewer renders it. */
async function logAgentSession(ctx: CommandContext, found: AgentSession): Promise<void> {
  const branch = await agentBranch(found);
  const rows = branch.map((l) => ({ id: l.id, timestamp: l.timestamp ?? '', parts: AGENTS[found.agent].render(l) })).filter((r) => r.parts.length > 0);
  const human = rows.length
    ? rows.map((r) => `${shortId(r.id)}  ${shortTime(r.timestamp)}  ${r.parts.map((p) => `${p.kind}: ${p.text.replace(/\s+/g, ' ').slice(0, 100)}`).join(' | ')}`).join('\n')
    : '(no entries)';
  ctx.print(human, { id: found.session.id, agent: found.agent, path: found.file, entries: rows });
}

const command: Command = {
  summary: 'Show the active branch of a session, root to leaf.',
  usage: '<ref>',
  usesSessions: unlessPathRef('needs'),
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync log <ref>');
    const found = await agentSessionOf(ctx, ref!);
    if (found.agent !== 'pi') return logAgentSession(ctx, found);
    const s = await openSessionView(found.session.path, { env: ctx.env });
    const branch = await s.branch();
    const labels = labelsOf(await s.labels());
    for (const p of s.problems) ctx.info(`line ${p.line} not loaded: ${p.reason}`);
    for (const p of s.treeProblems) ctx.info(`entry ${shortId(p.entryId)}: ${p.reason}`);
    const human = branch.length
      ? branch.map((e) => `${shortId(e.id)}  ${shortTime(e.timestamp)}  ${describeEntry(e)}${labels.has(e.id) ? `  [${labels.get(e.id)}]` : ''}`).join('\n')
      : '(no entries)';
    ctx.print(human, { id: s.header.id, leafId: s.leafId, entries: branch });
  },
};
export default command;
