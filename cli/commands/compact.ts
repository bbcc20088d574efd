// `sessync compact <ref> --summary TEXT --keep-from ENTRY`: appends a compaction; old entries stay, the context changes.
import type { Command } from '../command.js';
import { buildContext } from '../../shared/context.js';
import { SessyncError } from '../../shared/errors.js';
import { positionals, sessionOf, stringOpt, unlessPathRef } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { resolveEntry } from '../store/resolve.js';
import { appendCompleted } from '../store/new-entry.js';
import { shortId } from '../format/short-id.js';
import { toJsonText } from '../../shared/json-stringify.js';

const USAGE = 'sessync compact <ref> --summary TEXT --keep-from ENTRY';

/** Rough token count of what the model is sent now (about 4 characters per token), as pi records it. */
function roughTokens(messages: unknown[]): number {
  let chars = 0;
  for (const m of messages) chars += toJsonText(m).length;
  return Math.ceil(chars / 4);
}

const command: Command = {
  summary: 'Compact the active branch: a summary stands for everything before ENTRY in the context; nothing is deleted.',
  usage: '<ref> --summary TEXT --keep-from ENTRY',
  usesSessions: unlessPathRef('needs'),
  options: { summary: { type: 'string' }, 'keep-from': { type: 'string' } },
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], USAGE);
    const summary = stringOpt(ctx, 'summary');
    const keepRef = stringOpt(ctx, 'keep-from');
    if (summary === undefined || keepRef === undefined) throw new SessyncError('bad_input', `--summary and --keep-from are required. Usage: ${USAGE}`);
    const { session } = await sessionOf(ctx, ref!);
    const s = await readSession(session.path);
    const keep = resolveEntry(s.tree, keepRef, 'entry to keep from');
    if (!s.tree.branch().some((e) => e.id === keep.id)) {
      throw new SessyncError('bad_input', `entry ${shortId(keep.id)} is not on the active branch; compaction keeps entries of the branch it is appended to`);
    }
    const tokensBefore = roughTokens(buildContext(s.tree, { header: s.header }).messages);
    const [e] = await appendCompleted(session.path, [{ type: 'compaction', summary, firstKeptEntryId: keep.id, tokensBefore }], { note: ctx.info, env: ctx.env });
    ctx.print(`compacted: context now starts with the summary, then ${shortId(keep.id)} onwards (about ${tokensBefore} tokens before)`, {
      id: e!.id,
      firstKeptEntryId: keep.id,
      tokensBefore,
    });
  },
};
export default command;
