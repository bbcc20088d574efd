// `sessync list [--all]`: this project's sessions (or every project's), newest first, from headers and a cache only.
import type { Command } from '../command.js';
import { listSessions } from '../store/session-index.js';
import { locate, positionals } from '../store/locate.js';
import { shortId } from '../format/short-id.js';
import { shortTime } from '../format/describe-entry.js';
import { sessionsRoot } from '../store/paths.js';
import { piLayout } from '../store/pi-folders.js';
import type { SessionSummary } from '../store/session-index.js';
import { AGENT_OPTION, agentEnv, agentPaths, chosenAgents, projectScope, refreshMirror, whenPi } from '../agents/agent-run.js';

const command: Command = {
  summary: 'List sessions of this project (--all: of every project), newest entry first.',
  help: 'Sorted by the time of each session\'s newest entry (as pi does), so every machine lists the same order; the time shown is that entry\'s.',
  usage: '[--all] [--agent pi|claude-code|codex|all]',
  usesSessions: whenPi('lists'),
  options: { all: { type: 'boolean', default: false }, ...AGENT_OPTION },
  async run(ctx) {
    positionals(ctx, [], 'sessync list [--all]');
    const place = await locate(ctx);
    const all = ctx.opts.all === true;
    const skipped: { path: string; reason: string }[] = [];
    const rows: (SessionSummary & { agent?: string })[] = [];
    const agents = await chosenAgents(ctx.opts.agent, ctx.env);
    for (const agent of agents) {
      await refreshMirror(agent, ctx.env, (t) => ctx.info(t), projectScope({ all, cwd: ctx.cwd }));
      const root = sessionsRoot(agentEnv(agent, ctx.env));
      // Rows name their agent when more than one agent's sessions are listed.
      const own = await agentPaths(agent, ctx.env);
      for (const r of await listSessions({ root, realCwd: place.realCwd, all, skipped, ...piLayout(agentEnv(agent, ctx.env)) })) rows.push({ ...r, path: own(r.id, r.path), ...(agents.length > 1 ? { agent } : {}) });
    }
    // Each agent's rows come sorted, newest entry first; with several agents, they are sorted again together.
    if (agents.length > 1) rows.sort((a, b) => (Date.parse(b.lastEntryAt) || 0) - (Date.parse(a.lastEntryAt) || 0));
    for (const s of skipped) ctx.info(`skipped ${s.path}: ${s.reason}`);
    const human =
      rows.length === 0
        ? `no sessions ${all ? `in ${place.root}` : `for ${place.realCwd}`} (start one with \`sessync new\`)`
        : rows
            .map((r) => {
              const count = r.messageCount === undefined ? '   ?' : String(r.messageCount).padStart(4);
              const what = [r.name, all ? r.cwd : undefined, r.agent ? `(${r.agent})` : undefined].filter(Boolean).join('  ');
              return `${shortId(r.id)}  ${shortTime(r.lastEntryAt)}  ${count} msgs  ${what}`.trimEnd();
            })
            .join('\n');
    ctx.print(human, rows);
  },
};
export default command;
