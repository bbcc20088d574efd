// `sessync import <url>`: makes a new local session in this project from a share link (no account needed).
import type { Command, CommandContext } from '../command.js';
import { locate, positionals } from '../store/locate.js';
import { fetchShare, writeImported, type FetchedShare } from '../share/import-share.js';
import { requireFullLink } from '../share/share-url.js';
import { shortId } from '../format/short-id.js';
import { isClaudeShare, writeClaudeImport } from '../agents/claude-share.js';
import { isCodexShare, writeCodexImport } from '../agents/codex-import.js';

/** Each run's share, fetched once: usesSessions needs its agent before the run starts, the run its entries. */
const shares = new WeakMap<CommandContext, Promise<FetchedShare>>();
function shareOf(ctx: CommandContext, url: string): Promise<FetchedShare> {
  let share = shares.get(ctx);
  if (!share) shares.set(ctx, (share = fetchShare(url)));
  return share;
}

const command: Command = {
  summary: 'Import a share link as a new session of this project: the shared branch with its entry ids, ready to continue and push.',
  usage: '<url>',
  // Per run: a Claude Code or Codex share is written into that agent's folder, so pi's (SESSYNC_SESSIONS_DIR) is not
  // used and may be missing; a pi share lands there, so a missing one is refused before anything is written.
  async usesSessions(ctx) {
    const url = ctx.args.length === 1 ? ctx.args[0]! : undefined;
    // Not one well-formed link: the run refuses it; the folder is checked first, as for any pi command (nothing fetched).
    // --sessions-dir on the import itself names where this import goes: checked before the share is fetched, so a
    // typo costs no request (SESSYNC_SESSIONS_DIR, set for every command, is checked only for a pi share).
    if (url === undefined || !isFullLink(url) || typeof ctx.opts['sessions-dir'] === 'string') return 'needs';
    const { payload } = await shareOf(ctx, url);
    return isClaudeShare(payload) || isCodexShare(payload) ? null : 'needs';
  },
  help: 'The link\'s key (after #) decrypts the share here; the new header\'s parentSession is the shared session\'s file when it is\non this machine (pi shows the import under it), else "sessync-share:<share id>"; sharedFrom names the original session and entry.',
  async run(ctx) {
    const [url] = positionals(ctx, ['<url>'], 'sessync import <url>');
    const place = await locate(ctx);
    const fetched = await shareOf(ctx, url!);
    if (isClaudeShare(fetched.payload)) {
      // A Claude Code session: a new session file in Claude Code's folder for this project.
      const cc = await writeClaudeImport(fetched.payload, ctx.env, place.realCwd);
      ctx.print(`imported ${cc.entryCount} lines as Claude Code session ${cc.id} (claude --resume ${cc.id})\n${cc.path}`, { ...cc, agent: 'claude-code' });
      return;
    }
    if (isCodexShare(fetched.payload)) {
      // A Codex rollout: a new rollout in Codex's sessions folder, with this project as its cwd.
      const cx = await writeCodexImport(fetched.payload, ctx.env, place.realCwd);
      ctx.print(`imported ${cx.entryCount} lines as Codex session ${cx.id} (codex resume ${cx.id})\n${cx.path}`, { ...cx, agent: 'codex' });
      return;
    }
    const imported = await writeImported(fetched, place.root, place.realCwd, ctx.env);
    ctx.print(`imported ${imported.entryCount} entries as session ${shortId(imported.id)}\n${imported.path}`, {
      id: imported.id,
      path: imported.path,
      entryCount: imported.entryCount,
      parentSession: imported.header.parentSession,
      sharedFrom: imported.header.sharedFrom,
    });
  },
};
function isFullLink(url: string): boolean {
  try {
    requireFullLink(url);
    return true;
  } catch {
    return false; // the run throws the same error, with its message
  }
}
export default command;
