// `sessync checkout <ref> <entry>`: continues from an earlier entry, recorded in the log so it survives a restart.
import type { Command } from '../command.js';
import { CHECKOUT_CUSTOM_TYPE, type SessionEntry } from '../../shared/entry.js';
import type { SessionTree } from '../../shared/tree.js';
import { positionals, sessionOf, unlessPathRef } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { resolveEntry } from '../store/resolve.js';
import { appendCompleted } from '../store/new-entry.js';
import { shortId } from '../format/short-id.js';

/**
 * The leaf is the target, or a checkout entry right under it, and is also the file's last line (what
 * pi takes as its leaf): another checkout entry would change nothing for either reader.
 */
function alreadyAt(tree: SessionTree, entries: readonly SessionEntry[], targetId: string): boolean {
  const leafId = tree.leafId;
  if (leafId === null || entries.at(-1)?.id !== leafId) return false;
  if (leafId === targetId) return true;
  const leaf = tree.get(leafId)!;
  return leaf.type === 'custom' && leaf.customType === CHECKOUT_CUSTOM_TYPE && tree.parentOf(leafId)?.id === targetId;
}

const command: Command = {
  summary: 'Continue a session from an earlier entry. The old branch stays (see `tree`).',
  usage: '<ref> <entry>',
  usesSessions: unlessPathRef('needs'),
  help: `Appends {type:"custom", customType:"${CHECKOUT_CUSTOM_TYPE}", data:{targetId}} under the entry, so it becomes the leaf\nfor sessync and pi alike; the next entries continue from there.\nWhen the session is already there (for pi too), nothing is written.`,
  async run(ctx) {
    const [ref, entryRef] = positionals(ctx, ['<ref>', '<entry>'], 'sessync checkout <ref> <entry>');
    const { session } = await sessionOf(ctx, ref!);
    const s = await readSession(session.path);
    const target = resolveEntry(s.tree, entryRef!);
    if (alreadyAt(s.tree, s.entries, target.id)) {
      ctx.print(`already at ${shortId(target.id)}; nothing written`, { id: s.header.id, targetId: target.id, leafId: s.tree.leafId, written: false });
      return;
    }
    const [rec] = await appendCompleted(
      session.path,
      [{ type: 'custom', customType: CHECKOUT_CUSTOM_TYPE, data: { targetId: target.id }, parentId: target.id }],
      { note: ctx.info, env: ctx.env },
    );
    ctx.print(`checked out ${shortId(target.id)}; new leaf ${shortId(rec!.id)} (the previous branch is kept)`, {
      id: s.header.id,
      targetId: target.id,
      leafId: rec!.id,
      written: true,
    });
  },
};
export default command;
