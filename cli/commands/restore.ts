// `sessync restore <ref>`: brings back a session this machine deleted after syncing it (a sync leaves it deleted).
import type { Command } from '../command.js';
import { type ErrorCode, isSessyncError, SessyncError } from '../../shared/errors.js';
import { AGENT_OPTION, chosenAgents, runAgentSync, whenPi } from '../agents/agent-run.js';
import { mapsOf } from '../sync/run-command.js';
import type { RunSummary } from '../sync/sync-run.js';
import { watchSignals } from '../sync/interrupt.js';

const command: Command = {
  summary: 'Bring back a session deleted here (by you or by the agent\'s cleanup) from the server.',
  usage: '<ref> [--agent pi|claude-code|codex|all] [--map KEY=PATH]...',
  usesSessions: whenPi('needs'),
  help: 'A session synced and then deleted on this machine is not pulled back by sync; restore pulls it again, into this project (or where --map says).',
  options: { ...AGENT_OPTION, map: { type: 'string', multiple: true } },
  async run(ctx) {
    const ref = ctx.args[0];
    if (!ref || ctx.args.length > 1) throw new SessyncError('bad_input', 'usage: sessync restore <ref>');
    const done: RunSummary[] = [];
    let missing: unknown;
    let stoppedBy: NodeJS.Signals | null = null;
    const agents = await chosenAgents(ctx.opts.agent, ctx.env);
    // Ctrl-C / SIGTERM from here on: the pull stops before its next request with its state saved (exit 130 / 143),
    // as push and pull do; the session stays restorable, by the same command.
    const interrupt = watchSignals();
    try {
      for (const agent of agents) {
        try {
          done.push(await runAgentSync(agent, { mode: 'pull', ref, cwd: ctx.cwd, env: ctx.env, maps: mapsOf(ctx), restore: true, note: (t) => ctx.info(t), interrupt }));
        } catch (e) {
          // A signal after an earlier agent's run restored the session ends the loop there: what was asked is done, and
          // the same command again would find nothing deleted to restore (not_found), so it is not an interruption.
          if (isSessyncError(e, 'interrupted') && restoredOf(done).length > 0) {
            stoppedBy = interrupt.signal ?? 'SIGINT';
            break;
          }
          if (!isSessyncError(e, 'not_found')) throw e;
          missing = e;
        }
      }
    } finally {
      interrupt.dispose();
    }
    const restored = restoredOf(done);
    if (restored.length === 0) {
      // A restore that failed says why (the server unreachable, a refusal), not that nothing matched: the session stays
      // deleted here, and the same command tries again.
      const failedOne = done.flatMap((s) => s.sessions).find((s) => s.error);
      if (failedOne?.error) {
        const { code, message, retryable } = failedOne.error;
        throw new SessyncError(code as ErrorCode, `restore of session ${failedOne.session} failed: ${message}. It is still deleted here; run \`sessync restore ${ref}\` again`, { retryable, details: { session: failedOne.session } });
      }
      if (missing) throw missing;
      throw new SessyncError('not_found', `no deleted session matches "${ref}" on the server`);
    }
    const failed = restored.filter((s) => s.error).length + done.reduce((n, s) => n + s.failed, 0);
    if (stoppedBy) ctx.info(`stopped by ${stoppedBy} before the other agents' sessions were looked at; what is listed is restored`);
    ctx.print(restored.map((s) => `restored ${s.session} (${s.pulled!.entries} entries) to ${s.path}`).join('\n'), stoppedBy ? { restored, stopped: stoppedBy } : { restored });
    return failed ? 1 : 0;
  },
};
export default command;

function restoredOf(done: readonly RunSummary[]) {
  return done.flatMap((s) => s.sessions).filter((s) => s.pulled && s.path);
}
