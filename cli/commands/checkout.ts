// `sessync checkout <ref> <entry>`: continues from an earlier entry, recorded in the log so it survives a restart.
import type { Command } from '../command.js';
import { CHECKOUT_CUSTOM_TYPE } from '../../shared/entry.js';
import { positionals, sessionOf } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { resolveEntry } from '../store/resolve.js';
import { appendCompleted } from '../store/new-entry.js';
import { shortId } from '../format/short-id.js';

const command: Command = {
  summary: 'Continue a session from an earlier entry. The old branch stays (see `tree`).',
  usage: '<ref> <entry>',
  help: `Appends {type:"custom", customType:"${CHECKOUT_CUSTOM_TYPE}", data:{targetId}} under the entry, so it becomes the leaf\nfor sessync and pi alike; the next entries continue from there.`,
  async run(ctx) {
    const [ref, entryRef] = positionals(ctx, ['<ref>', '<entry>'], 'sessync checkout <ref> <entry>');
    const { session } = await sessionOf(ctx, ref!);
    const s = await readSession(session.path);
    const target = resolveEntry(s.tree, entryRef!);
    const [rec] = await appendCompleted(
      session.path,
      [{ type: 'custom', customType: CHECKOUT_CUSTOM_TYPE, data: { targetId: target.id }, parentId: target.id }],
      { note: ctx.info },
    );
    ctx.print(`checked out ${shortId(target.id)}; new leaf ${shortId(rec!.id)} (the previous branch is kept)`, {
      id: s.header.id,
      targetId: target.id,
      leafId: rec!.id,
    });
  },
};
export default command;
