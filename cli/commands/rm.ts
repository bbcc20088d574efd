// `sessync rm <ref> [--remote] [--keep-local] [--force]`: removes a session's local file; with --remote deletes it from the server first, everywhere.
import type { Command, CommandContext } from '../command.js';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { positionals } from '../store/locate.js';
import { agentSessionOf } from '../agents/agent-ref.js';
import type { AgentName } from '../../shared/agents/agent.js';
import { shortId } from '../format/short-id.js';
import type { SessionSummary } from '../store/session-index.js';
import { matchRemote, openSync, withSyncLock } from '../sync/sync-run.js';
import { markDeleted, removeLocal } from '../sync/tombstones.js';
import { removeHere } from '../sync/dropped.js';
import { sessyncHome } from '../store/paths.js';
import { loadLogin } from '../login-store.js';
import { ApiClient } from '../api-client.js';
import { serverKey } from '../sync/session-sync-state.js';
import { entryCount } from '../sync/unpushed.js';

const USAGE = 'sessync rm <ref> [--remote] [--keep-local] [--force]';

/** The session here: pi's file, or another agent's session (its mirror as `session`, the agent's own main file). */
interface Here {
  session: SessionSummary;
  agent: AgentName;
  file: string;
}

/**
 * The local session, or null when only the server has it (allowed with --remote). Another agent's session is refused
 * without --remote: its files are the agent's, and removing sessync's mirror of them would only have the next sync
 * mirror them again. With --remote it is deleted on the server as any session is, seen here or not.
 */
async function localOf(ctx: CommandContext, ref: string, remote: boolean): Promise<Here | null> {
  try {
    const found = await agentSessionOf(ctx, ref);
    if (found.agent === 'pi' || remote) return found;
    throw new SessyncError(
      'bad_input',
      `${shortId(found.session.id)} is a ${found.agent} session (${found.file}); sessync rm removes pi sessions only (\`sessync rm ${shortId(found.session.id)} --remote\` deletes it on the server, leaving that file). Delete that file to remove it here: sync then leaves it deleted, and \`sessync restore ${shortId(found.session.id)}\` brings it back.`,
      { details: { id: found.session.id, agent: found.agent, path: found.file } },
    );
  } catch (e) {
    if (remote && isSessyncError(e, 'not_found')) return null;
    throw e;
  }
}

const command: Command = {
  summary: 'Remove a session: its local file; with --remote also from the server (batches, heads, meta, its shares), leaving a tombstone other machines see.',
  usage: '<ref> [--remote] [--keep-local] [--force]',
  usesSessions: 'needs',
  help: [
    '--remote deletes the session on the server first: its shares answer 410, other machines stop pushing it on their',
    'next sync and keep their own file unless they run `sessync rm` or `sync --apply-deletes` (a Claude Code or Codex',
    'file stays: sessync never removes an agent\'s files, delete it by hand). It cannot reach copies',
    'already on other machines or shares already downloaded. An interrupted deletion is finished by running it again.',
    '--keep-local keeps this machine\'s file (not pushed again unless `sessync push <ref> --undelete`).',
    'Without --remote only this machine\'s file goes, as if deleted by hand: the server and the other machines keep the',
    'session, and sync does not bring it back here (also when others add to it); `sessync restore <ref>` does.',
    'restore brings back only what the server has: rm refuses (and deletes nothing) while the file holds entries not pushed',
    'to the server you are logged in to, or, logged out or never synced, to any server (the file is then their only copy).',
    'It names how many: run `sessync push <ref>` (or `sessync sync`) first, or add --force to delete them for good.',
  ].join('\n'),
  options: { remote: { type: 'boolean', default: false }, 'keep-local': { type: 'boolean', default: false }, force: { type: 'boolean', default: false } },
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], USAGE);
    const remote = ctx.opts.remote === true;
    const keepLocal = ctx.opts['keep-local'] === true;
    if (keepLocal && !remote) throw new SessyncError('bad_input', `--keep-local only makes sense with --remote. Usage: ${USAGE}`);
    const here = await localOf(ctx, ref!, remote);
    const local = here?.session ?? null;
    if (!remote) {
      // Only this machine's copy, gone as a deletion by hand goes: its sync state stays, so sync leaves it deleted.
      const { id, path } = local!;
      const login = await loadLogin(ctx.env);
      const api = login ? ApiClient.forLogin(login) : null; // no request: only its URL as the sync state names it
      const force = ctx.opts.force === true;
      const { deletedHere, lost, deletedOnServer } = await removeHere(sessyncHome(ctx.env), id, path, { server: api ? serverKey(api.url, api.account) : null, ...(api ? { url: api.url } : {}), force });
      const there = `\`sessync rm ${id} --remote\` deletes it there`;
      const gone = lost > 0 ? `; its ${entryCount(lost)}${deletedOnServer ? '' : ` not pushed to ${api ? 'the server' : 'any server'}`} ${lost === 1 ? 'is' : 'are'} gone for good` : '';
      const human = deletedOnServer
        ? `removed ${path}${gone}: the session was deleted on the server${deletedOnServer.at ? ` at ${deletedOnServer.at}` : ''}, so nothing of it is left to restore`
        : deletedHere
        ? `removed ${path}${gone}; the server keeps the session and sync leaves it deleted here (\`sessync restore ${id}\` brings it back, ${there})`
        : `removed ${path}${gone} (never synced from this machine: \`sessync restore\` cannot bring it back here; a copy another machine synced stays on the server: ${there})`;
      ctx.print(human, { session: id, path, remote: false, deletedHere, lost, ...(deletedOnServer ? { deletedOnServer } : {}) });
      return;
    }
    const sync = await openSync(ctx.env, { note: (t) => ctx.info(t) });
    return withSyncLock(sync, async () => {
      let session = local?.id;
      if (!session) {
        const { heads, deleted } = await sync.api.feed();
        // Only the server has it, or a deletion of it was interrupted (its tombstone is listed): retrying finishes it.
        const m = [...new Set([...matchRemote(heads, ref!), ...deleted.filter((t) => t.session.startsWith(ref!)).map((t) => t.session)])];
        if (m.length === 0) throw new SessyncError('not_found', `no session matches "${ref}" here or on the server`);
        if (m.length > 1) throw new SessyncError('ambiguous', `"${ref}" matches ${m.length} sessions on the server: ${m.slice(0, 10).join(', ')}; give more characters`, { details: { candidates: m } });
        session = m[0]!;
      }
      const r = await sync.api.deleteSession(session, sync.hostId);
      let localNote = '';
      if (here && here.agent !== 'pi') {
        // The agent's own files stay (sessync only reads and appends them); its mirror is marked, so nothing of it is pushed again.
        await markDeleted(sync, session, here.session.path, { at: r.deletedAt, host: r.host });
        localNote = `; kept ${here.file}, ${here.agent}'s own file (delete it to remove the session here; not pushed again)`;
      } else if (local && keepLocal) {
        await markDeleted(sync, session, local.path, { at: r.deletedAt, host: r.host });
        localNote = `; kept ${local.path} (not pushed again unless \`sessync push ${session} --undelete\`)`;
      } else if (local) {
        await removeLocal(sync, session, local.path);
        localNote = `; removed ${local.path}`;
      }
      const shares = r.sharesRevoked ? `, ${r.sharesRevoked} share${r.sharesRevoked === 1 ? '' : 's'} revoked` : '';
      // A share the server could not revoke (its records are damaged) may still open: its owner must hear of it.
      for (const s of r.sharesNotRevoked ?? []) ctx.info(`warning: ${s.message}`);
      ctx.print(`deleted session ${session} from the server (${r.removed} objects${shares})${localNote}; other machines stop pushing it on their next sync and keep their own copies`, {
        session,
        remote: true,
        deletedAt: r.deletedAt,
        host: r.host,
        removed: r.removed,
        sharesRevoked: r.sharesRevoked,
        ...(r.sharesNotRevoked ? { sharesNotRevoked: r.sharesNotRevoked } : {}),
        ...(here && here.agent !== 'pi' ? { agent: here.agent, path: here.file, localRemoved: false } : local ? { path: local.path, localRemoved: !keepLocal } : {}),
      });
    });
  },
};
export default command;
