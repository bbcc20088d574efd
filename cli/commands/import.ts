// `sessync import <url>`: makes a new local session in this project from a share link (no account needed).
import type { Command } from '../command.js';
import { locate, positionals } from '../store/locate.js';
import { fetchShare, writeImported } from '../share/import-share.js';
import { shortId } from '../format/short-id.js';
import { isClaudeShare, writeClaudeImport } from '../agents/claude-share.js';
import { isCodexShare, writeCodexImport } from '../agents/codex-import.js';

const command: Command = {
  summary: 'Import a share link as a new session of this project: the shared branch with its entry ids, ready to continue and push.',
  usage: '<url>',
  usesSessions: 'needs',
  help: 'The link\'s key (after #) decrypts the share here; the new header\'s parentSession is the shared session\'s file when it is\non this machine (pi shows the import under it), else "sessync-share:<share id>"; sharedFrom names the original session and entry.',
  async run(ctx) {
    const [url] = positionals(ctx, ['<url>'], 'sessync import <url>');
    const place = await locate(ctx);
    const fetched = await fetchShare(url!);
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
export default command;
