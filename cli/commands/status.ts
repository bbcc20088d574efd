// `sessync status`: per session, what is not yet pushed and what waits on the server.
import type { Command } from '../command.js';
import { isSessyncError } from '../../shared/errors.js';
import { sessionsRoot } from '../store/paths.js';
import { scopeOf } from '../sync/run-command.js';
import { syncStatus, type StatusReport } from '../sync/sync-status.js';
import { AGENT_OPTION, agentEnv, agentPaths, chosenAgents, projectScope, refreshMirror } from '../agents/agent-run.js';

const command: Command = {
  summary: 'Show, per session, entries not yet pushed and batches waiting on the server (local figures work offline).',
  usage: '[<ref> | --all] [--agent pi|claude-code|all]',
  options: { all: { type: 'boolean', default: false }, ...AGENT_OPTION },
  async run(ctx) {
    let r: StatusReport | undefined;
    let notFound: unknown;
    const scope = scopeOf(ctx, 'status');
    const agents = await chosenAgents(ctx.opts.agent, ctx.env);
    for (const agent of agents) {
      await refreshMirror(agent, ctx.env, (t) => ctx.info(t), projectScope({ ...scope, cwd: ctx.cwd }));
      const env = agentEnv(agent, ctx.env);
      let one: StatusReport;
      try {
        one = await syncStatus({ ...scope, cwd: ctx.cwd, env, root: sessionsRoot(env), agent });
      } catch (e) {
        // A ref names one agent's session: the others not having it is no failure, unless none does.
        if (scope.ref === undefined || agents.length === 1 || !isSessyncError(e, 'not_found')) throw e;
        notFound = e;
        continue;
      }
      if (agents.length > 1) for (const s of one.sessions) s.agent = agent; // rows name their agent when there are several
      const own = await agentPaths(agent, ctx.env);
      for (const s of one.sessions) if (s.path) s.path = own(s.session, s.path);
      if (!r) r = one;
      else {
        r.sessions.push(...one.sessions);
        r.skippedFiles.push(...one.skippedFiles);
        r.serverError ??= one.serverError;
      }
    }
    if (!r) throw notFound;
    const lines: string[] = [];
    lines.push(r.server ? `server: ${r.server}${r.serverError ? ` (${r.serverError.message})` : ''}` : 'server: not logged in (run `sessync login <url> --token <token>`)');
    for (const s of r.sessions) {
      const push = s.pendingBatch ? `${s.unpushedEntries} to push + 1 batch unacknowledged` : `${s.unpushedEntries} to push`;
      const pull =
        s.waitingBatches === null
          ? 'server unknown'
          : s.deletedHere
            ? `deleted here, kept on the server (sessync restore ${s.session})`
            : s.remoteOnly
              ? `only on the server (${s.waitingBatches} batches)`
              : `${s.waitingBatches} batch${s.waitingBatches === 1 ? '' : 'es'} to pull`;
      const behind = s.serverBehind ? '; the server has fewer of my batches than I think (the next sync pushes it again)' : '';
      lines.push(`${s.session}  ${push}, ${pull}${behind}${s.name ? `  ${s.name}` : ''}${s.agent ? `  (${s.agent})` : ''}`);
    }
    for (const f of r.skippedFiles) lines.push(`skipped ${f.path}: ${f.reason}`);
    const toPush = r.sessions.filter((s) => s.unpushedEntries > 0 || s.pendingBatch || s.serverBehind).length;
    const toPull = r.sessions.filter((s) => (s.waitingBatches ?? 0) > 0).length;
    lines.push(`${r.sessions.length} session(s): ${toPush} with entries to push, ${r.serverError ? 'server not checked' : `${toPull} with entries to pull`}`);
    ctx.print(lines.join('\n'), r);
  },
};
export default command;
