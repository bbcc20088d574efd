// `sessync status`: per session, what is not yet pushed (local, printed at once) and what waits on the server.
import type { Command } from '../command.js';
import { isSessyncError } from '../../shared/errors.js';
import { codexForkList } from '../agents/codex-state.js';
import { AGENT_OPTION, agentEnv, agentPaths, chosenAgents, projectScope, refreshMirror, whenPi } from '../agents/agent-run.js';
import { sessionsRoot } from '../store/paths.js';
import { scopeOf } from '../sync/run-command.js';
import { syncStatus, type ServerReach, type StatusReport, type StatusRow } from '../sync/sync-status.js';
import { statusCounts, toPullCount, toPushCount } from '../sync/status-counts.js';
import { ApiClient } from '../api-client.js';

function pushText(s: StatusRow): string {
  if (s.unpushedEntries === null) return 'not checked (not logged in)';
  if (s.deletedOnServer) return `deleted on the server${s.deletedOnServer.at ? ` at ${s.deletedOnServer.at}` : ''}, kept here and not pushed (${s.unpushedEntries} entries)`;
  const n0 = s.pendingBatch ? `${s.unpushedEntries} to push + 1 batch unacknowledged` : `${s.unpushedEntries} to push`;
  // Printed before the server is asked: the entries after a cut-short pull are told apart in the server's lines.
  const n = s.interruptedPull?.unchecked ? `${n0}, and ${s.interruptedPull.unchecked} after a pull that was cut short, not yet told apart from the server's` : n0;
  return s.notOnServer ? `${n}, not on the server yet` : n;
}

/** ` (claude-code)` after `here`/`server` when the command shows several agents' blocks, so each says whose it is. */
const whose = (r: StatusReport, named: boolean) => (named && r.agent ? ` (${r.agent})` : '');

function localLines(r: StatusReport, named = false): string[] {
  const rows = r.sessions.filter((s) => !s.remoteOnly);
  const toPush = toPushCount(rows);
  // Not logged in, what was pushed is recorded for no known server: no count is given rather than a wrong one.
  const here = `here${whose(r, named)}`;
  const lines = [r.loggedIn ? `${here}: ${rows.length} session(s), ${toPush} to push` : `${here}: ${rows.length} session(s), not checked against a server (not logged in)`];
  for (const s of rows) {
    const damaged = s.damaged?.length ? `; ${s.damaged.length} damaged stored batch(es) or line(s) passed over (status --json lists them)` : '';
    lines.push(`  ${s.session}  ${pushText(s)}${damaged}${s.name ? `  ${s.name}` : ''}${s.agent ? `  (${s.agent})` : ''}`);
  }
  for (const f of r.skippedFiles) lines.push(`  skipped ${f.path}: ${f.reason}`);
  return lines;
}

function serverLines(r: StatusReport, named = false): string[] {
  const server = `server${whose(r, named)}`;
  if (!r.server) return [`${server}: not logged in (run \`sessync login <url> --token <token>\`)`];
  if (r.serverError && r.sessions.every((s) => s.waitingBatches === null)) return [`${server}: ${r.server}: not checked (${r.serverError.message})`];
  const lines = [`${server}: ${r.server}: ${toPullCount(r.sessions)} session(s) with entries to pull${r.serverError ? ` (partly checked: ${r.serverError.message})` : ''}`];
  for (const s of r.sessions) {
    const behind = s.serverBehind ? '; the server has fewer of my batches than I think (the next sync pushes it again)' : '';
    if (s.interruptedPull && s.interruptedPull.unchecked === 0) lines.push(`  ${s.session}  told apart with the server after a pull that was cut short: ${s.unpushedEntries} to push in all (the next sync pulls it again first)`);
    if (!s.remoteOnly && !(s.waitingBatches ?? 0) && !behind) continue;
    const pull = s.deletedHere
      ? `deleted here, kept on the server (sessync restore ${s.session})`
      : s.remoteOnly
        ? `only on the server (${s.waitingBatches} batches)`
        : `${s.waitingBatches ?? 0} batch${s.waitingBatches === 1 ? '' : 'es'} to pull`;
    lines.push(`  ${s.session}  ${pull}${behind}${s.agent ? `  (${s.agent})` : ''}`);
  }
  for (const h of r.ignoredHeads ?? []) lines.push(`  ${ApiClient.ignoredHeadNote(h)}`);
  return lines;
}

const command: Command = {
  summary: 'Show, per session, entries not yet pushed (printed at once, offline too) and batches waiting on the server.',
  usage: '[<ref> | --all] [--agent pi|claude-code|codex|all]',
  usesSessions: whenPi('needs'),
  options: { all: { type: 'boolean', default: false }, ...AGENT_OPTION },
  async run(ctx) {
    const scope = scopeOf(ctx, 'status');
    const agents = await chosenAgents(ctx.opts.agent, ctx.env);
    let all: StatusReport | undefined;
    /** Each agent's own figures, for --json when there are several (the merged report holds every agent's rows). */
    const perAgent: Record<string, { sessions: number; toPush: number; toPull: number; serverChecked: boolean; serverError?: StatusReport['serverError'] }> = {};
    const named = agents.length > 1;
    let notFound: unknown;
    const reach: ServerReach = {}; // a server unreachable for one agent's report is not asked again for the next
    for (const agent of agents) {
      await refreshMirror(agent, ctx.env, (t) => ctx.info(t), projectScope({ ...scope, cwd: ctx.cwd }));
      const env = agentEnv(agent, ctx.env);
      const own = await agentPaths(agent, ctx.env);
      // Rows name their agent and show the agent's own file when there are several agents.
      const label = (r: StatusReport) => {
        for (const s of r.sessions) {
          if (s.path) s.path = own(s.session, s.path);
          if (agents.length > 1) s.agent = agent;
        }
        return r;
      };
      let r: StatusReport;
      try {
        r = await syncStatus({
          ...scope,
          cwd: ctx.cwd,
          env,
          root: sessionsRoot(env),
          agent,
          reach,
          wait: (t, d) => ctx.waiting(t, d),
          // The local half goes out before the server is asked: with the server away it is the whole answer.
          ...(ctx.json ? {} : { onLocal: (local: StatusReport) => ctx.print(localLines(label(local), named).join('\n')) }),
        });
      } catch (e) {
        // A ref names one agent's session: the others not having it is no failure, unless none does.
        if (scope.ref === undefined || agents.length === 1 || !isSessyncError(e, 'not_found')) throw e;
        notFound = e;
        continue;
      }
      label(r);
      if (!ctx.json) ctx.print(serverLines(r, named).join('\n'));
      const here = r.sessions.filter((s) => !s.remoteOnly);
      perAgent[agent] = {
        sessions: here.length,
        toPush: toPushCount(here),
        toPull: toPullCount(r.sessions),
        serverChecked: r.serverChecked,
        ...(r.serverError ? { serverError: r.serverError } : {}),
      };
      if (!all) all = { ...r, sessions: [...r.sessions], skippedFiles: [...r.skippedFiles] };
      else {
        all.sessions.push(...r.sessions);
        all.skippedFiles.push(...r.skippedFiles);
        all.serverError ??= r.serverError;
        all.serverChecked &&= r.serverChecked;
        if (r.ignoredHeads) (all.ignoredHeads ??= []).push(...r.ignoredHeads);
      }
    }
    if (!all) throw notFound;
    // The merged report is every agent's: it names none, and says each one's figures beside (as sync --json does).
    if (named) {
      delete all.agent;
      all.agents = perAgent;
    }
    const forks = agents.includes('codex') ? await codexForkList(ctx.env) : [];
    if (!ctx.json && forks.length > 0) {
      ctx.print(['Codex forks made here (a session continued on two machines):', ...forks.map((f) => `  ${f.fork} from ${f.from} (${f.when}): ${f.reason}`)].join('\n'));
    }
    // The counts the text gives, for scripts: toPull leaves out sessions deleted here (sync does not pull them back).
    const counts = statusCounts(all);
    if (ctx.json) ctx.print('', forks.length > 0 ? { ...all, ...counts, codexForks: forks } : { ...all, ...counts });
  },
};
export default command;
