// `sessync log <ref>`: the active branch, root to leaf, one line per entry.
import type { Command } from '../command.js';
import { positionals, sessionOf, unlessPathRef } from '../store/locate.js';
import { openSessionView } from '../store/session-file-index-open.js';
import { describeEntry, labelsOf, shortTime } from '../format/describe-entry.js';
import { shortId } from '../format/short-id.js';

const command: Command = {
  summary: 'Show the active branch of a session, root to leaf.',
  usage: '<ref>',
  usesSessions: unlessPathRef('needs'),
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync log <ref>');
    const { session } = await sessionOf(ctx, ref!);
    const s = await openSessionView(session.path, { env: ctx.env });
    const branch = await s.branch();
    const labels = labelsOf(await s.labels());
    for (const p of s.problems) ctx.info(`line ${p.line} not loaded: ${p.reason}`);
    for (const p of s.treeProblems) ctx.info(`entry ${shortId(p.entryId)}: ${p.reason}`);
    const human = branch.length
      ? branch.map((e) => `${shortId(e.id)}  ${shortTime(e.timestamp)}  ${describeEntry(e)}${labels.has(e.id) ? `  [${labels.get(e.id)}]` : ''}`).join('\n')
      : '(no entries)';
    ctx.print(human, { id: s.header.id, leafId: s.leafId, entries: branch });
  },
};
export default command;
