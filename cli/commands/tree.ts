// `sessync tree <ref>`: every entry as an ASCII tree with branch points, labels and the active leaf.
import type { Command } from '../command.js';
import { positionals, sessionOf, unlessPathRef } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { renderTree } from '../format/tree-render.js';
import { labelsOf } from '../format/describe-entry.js';
import { compareByTime } from '../../shared/tree.js';

const command: Command = {
  summary: 'Draw the entry tree of a session: branch points, labels, `*` on the active branch, `<- leaf` at its end.',
  usage: '<ref>',
  usesSessions: unlessPathRef('needs'),
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync tree <ref>');
    const { session } = await sessionOf(ctx, ref!);
    const s = await readSession(session.path);
    if (!ctx.json) {
      const lines = renderTree(s.tree);
      ctx.print(lines.length ? lines.join('\n') : '(no entries)');
      return;
    }
    const labels = labelsOf(s.entries);
    const nodes = s.tree.entries.map((e) => ({
      id: e.id,
      parentId: e.parentId,
      type: e.type,
      timestamp: e.timestamp,
      children: s.tree.children(e.id).sort(compareByTime).map((c) => c.id), // the same order on every machine
      ...(labels.has(e.id) ? { label: labels.get(e.id) } : {}),
    }));
    ctx.print('', { id: s.header.id, leafId: s.tree.leafId, nodes, problems: s.tree.problems });
  },
};
export default command;
