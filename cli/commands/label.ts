// `sessync label <ref> <entry> <text>`: puts a label on an entry (shown by log and tree).
import type { Command } from '../command.js';
import { positionals, sessionOf, unlessPathRef } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { resolveEntry } from '../store/resolve.js';
import { appendCompleted } from '../store/new-entry.js';
import { shortId } from '../format/short-id.js';

const command: Command = {
  summary: 'Label an entry of a session.',
  usage: '<ref> <entry> <text>',
  usesSessions: unlessPathRef('needs'),
  async run(ctx) {
    const [ref, entryRef, ...words] = positionals(ctx, ['<ref>', '<entry>', '<text>'], 'sessync label <ref> <entry> <text>', true);
    const text = words.join(' ');
    const { session } = await sessionOf(ctx, ref!);
    const s = await readSession(session.path);
    const target = resolveEntry(s.tree, entryRef!);
    const [e] = await appendCompleted(session.path, [{ type: 'label', targetId: target.id, label: text }], { note: ctx.info, env: ctx.env });
    ctx.print(`labelled ${shortId(target.id)} "${text}"`, { id: e!.id, targetId: target.id, label: text });
  },
};
export default command;
