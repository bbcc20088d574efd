// `sessync name <ref> <text>`: names a session (a session_info entry, as pi writes it).
import type { Command } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { positionals, sessionOf, unlessPathRef } from '../store/locate.js';
import { appendCompleted } from '../store/new-entry.js';
import { shortId } from '../format/short-id.js';

const command: Command = {
  summary: 'Name a session.',
  usage: '<ref> <text>',
  usesSessions: unlessPathRef('needs'),
  async run(ctx) {
    const [ref, ...words] = positionals(ctx, ['<ref>', '<text>'], 'sessync name <ref> <text>', true);
    const name = words.join(' ');
    // An empty name would blank the one list shows; there is no "unname", so refuse rather than guess.
    if (name.trim() === '') throw new SessyncError('bad_input', 'the name is empty: give some text. Usage: sessync name <ref> <text>');
    const { session } = await sessionOf(ctx, ref!);
    const [e] = await appendCompleted(session.path, [{ type: 'session_info', name }], { note: ctx.info, env: ctx.env });
    ctx.print(`named ${shortId(session.id)} "${name}"`, { id: e!.id, session: session.id, name });
  },
};
export default command;
