// What `share` uploads, whichever agent wrote the session (pi, Claude Code or Codex), found by one ref rule over all of them.
import type { CommandContext } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { realCwd } from '../store/paths.js';
import { openSessionView } from '../store/session-file-index-open.js';
import { resolveEntry } from '../store/resolve.js';
import { chosenAgents } from './agent-run.js';
import { agentSessionOf } from './agent-ref.js';
import { claudeShareSource, type ShareSource } from './claude-share.js';
import { codexShareSource } from './codex-share.js';

/**
 * The session `ref` and its branch root..`at` (default: the leaf); not_found when no agent has such a session. The ref
 * is resolved over every chosen agent at once (agentSessionOf): one matching sessions of two agents is ambiguous, not
 * the first agent's, so a share never uploads another session than the one the user read the id of.
 */
export async function shareSourceFor(ctx: CommandContext, ref: string, at: string | undefined): Promise<ShareSource> {
  const found = await agentSessionOf(ctx, ref, { agents: await chosenAgents(ctx.opts.agent, ctx.env) });
  if (found.agent === 'pi') {
    const s = await openSessionView(found.session.path, { env: ctx.env });
    if (s.problems.length) ctx.info(`note: ${s.problems.length} unreadable line(s) of ${s.path} are not part of the share (run \`sessync doctor\`)`);
    const atId = at === undefined ? s.leafId : resolveEntry(s.tree(), at).id;
    return { header: s.header, branch: atId === null ? [] : await s.branch(atId), atId };
  }
  const id = found.session.id;
  // Codex's is read from its own rollout, not the mirror: the share is what the user sees in Codex right now.
  const source = found.agent === 'claude-code' ? await claudeShareSource(ctx.env, id, ctx.cwd, await realCwd(ctx.cwd), at) : await codexShareSource(ctx.env, id, ctx.cwd, at);
  if (!source) throw new SessyncError('not_found', `no session matches "${ref}"`);
  for (const n of source.notes ?? []) ctx.info(`note: ${n}`);
  return source;
}
