// `sessync resume <ref>`: opens a session by id prefix or path and reports where it continues (leaf, model, context size).
import type { Command, CommandContext } from '../command.js';
import { positionals, unlessPathRef } from '../store/locate.js';
import { agentResumeCommand, agentSessionOf, type AgentSession } from '../agents/agent-ref.js';
import { shortId } from '../format/short-id.js';
import { shellWord } from '../format/shell-word.js';
import { resumeSession } from '../store/resume-session.js';
import { migrationNote, resumeText } from '../format/resume-text.js';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { loadLogin } from '../login-store.js';

/**
 * The local file for `ref` (or another agent's session it names); a session that exists only on the server (when
 * logged in) is pulled first.
 */
async function locate(ctx: CommandContext, ref: string): Promise<string | AgentSession> {
  try {
    const found = await agentSessionOf(ctx, ref);
    return found.agent === 'pi' ? found.session.path : found;
  } catch (e) {
    const looksLikePath = ref.includes('/') || ref.endsWith('.jsonl');
    if (!isSessyncError(e, 'not_found') || looksLikePath || !(await loadLogin(ctx.env))) throw e;
    // Loaded only here: local resumes never pay for the sync client.
    const { pullRemoteSession } = await import('../sync/remote-resume.js');
    ctx.info(`"${ref}" is not on this machine; looking on the server`);
    try {
      return await pullRemoteSession(ref, { cwd: ctx.cwd, env: ctx.env, note: (t) => ctx.info(t), wait: (t, d) => ctx.waiting(t, d) });
    } catch (err) {
      if (!isSessyncError(err, 'unavailable')) throw err;
      throw new SessyncError('unavailable', `no session matches "${ref}" on this machine, and the server could not be asked: ${err.message}`, { retryable: true, details: err.details, cause: err });
    }
  }
}

const command: Command = {
  summary: 'Resume a session by id (the short form list shows, or a prefix of the full id; this project first, then all) or path: restores its active branch, model and thinking level. When logged in, a session only on the server is pulled first.',
  usage: '<ref>',
  usesSessions: unlessPathRef('needs'),
  help: 'A <ref> is the full id, a prefix of it, or a prefix of the short form that list, log and tree show (for sessync\'s ids the last 8 hex characters: their first ones are the creation time, which sessions of a few weeks share). One that matches several sessions exits 2 and lists them.',
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync resume <ref>');
    const path = await locate(ctx, ref!);
    if (typeof path !== 'string') {
      // Another agent's session: that agent continues it, in the session's project.
      const agent = path.agent as Exclude<typeof path.agent, 'pi'>;
      const command = agentResumeCommand(agent, path.session.id);
      ctx.print(`${shortId(path.session.id)} is a ${agent} session (${path.file}); continue it with:\n  cd ${shellWord(path.session.cwd)} && ${command}`, { id: path.session.id, agent, path: path.file, cwd: path.session.cwd, command });
      return;
    }
    const { info, migrated } = await resumeSession(path, ctx.env);
    if (migrated?.changed) ctx.info(migrationNote(migrated));
    ctx.print(resumeText(info), info);
  },
};
export default command;
