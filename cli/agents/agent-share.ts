// What `share` uploads, whichever agent wrote the session: a pi session of this machine first, else Claude Code's, else Codex's.
import type { CommandContext } from '../command.js';
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { sessionOf } from '../store/locate.js';
import { realCwd } from '../store/paths.js';
import { openSessionView } from '../store/session-file-index-open.js';
import { resolveEntry } from '../store/resolve.js';
import { chosenAgents, refreshMirror } from './agent-run.js';
import { claudeShareSource, type ShareSource } from './claude-share.js';
import { codexShareSource } from './codex-share.js';

/** The session `ref` and its branch root..`at` (default: the leaf); not_found when no agent has such a session. */
export async function shareSourceFor(ctx: CommandContext, ref: string, at: string | undefined): Promise<ShareSource> {
  const agents = await chosenAgents(ctx.opts.agent, ctx.env);
  let notFound: unknown;
  if (agents.includes('pi')) {
    try {
      const { session } = await sessionOf(ctx, ref);
      const s = await openSessionView(session.path, { env: ctx.env });
      if (s.problems.length) ctx.info(`note: ${s.problems.length} unreadable line(s) of ${s.path} are not part of the share (run \`sessync doctor\`)`);
      const atId = at === undefined ? s.leafId : resolveEntry(s.tree(), at).id;
      return { header: s.header, branch: atId === null ? [] : await s.branch(atId), atId };
    } catch (e) {
      if (!isSessyncError(e, 'not_found')) throw e;
      notFound = e;
    }
  }
  if (agents.includes('claude-code')) {
    await refreshMirror('claude-code', ctx.env, (t) => ctx.info(t));
    const cc = await claudeShareSource(ctx.env, ref, ctx.cwd, await realCwd(ctx.cwd), at);
    if (cc) {
      for (const n of cc.notes ?? []) ctx.info(`note: ${n}`);
      return cc;
    }
  }
  if (agents.includes('codex')) {
    // Read from Codex's own rollout, not a mirror: the share is what the user sees in Codex right now.
    const cx = await codexShareSource(ctx.env, ref, ctx.cwd, at);
    if (cx) {
      for (const n of cx.notes ?? []) ctx.info(`note: ${n}`);
      return cx;
    }
  }
  throw notFound ?? new SessyncError('not_found', `no session matches "${ref}"`);
}
