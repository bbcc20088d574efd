// ASCII drawing of a session's entry tree: linear runs stay in one column, branch points fork, the active branch is marked.
import { compareByTime, type SessionTree } from '../../shared/tree.js';
import { describeEntry, labelsOf, shortTime } from './describe-entry.js';
import { shortId } from './short-id.js';

interface Frame {
  id: string;
  /** Drawn before the connector on this node's line. */
  prefix: string;
  connector: '' | '|-- ' | '`-- ';
}

/**
 * One line per entry; iterative (deep chains do not recurse). `*` marks the active branch, `<- leaf` the leaf.
 * Siblings (and roots) go oldest first by (timestamp, id), so two machines with the same entries draw the same tree.
 */
export function renderTree(tree: SessionTree, leafId: string | null = tree.leafId): string[] {
  const active = new Set<string>(leafId ? tree.branch(leafId).map((e) => e.id) : []);
  const labels = labelsOf(tree.entries);
  const lines: string[] = [];
  const roots = tree.roots().sort(compareByTime);
  const stack: Frame[] = [];
  for (let i = roots.length - 1; i >= 0; i--) stack.push({ id: roots[i]!.id, prefix: '', connector: '' });
  while (stack.length > 0) {
    const f = stack.pop()!;
    const e = tree.get(f.id)!;
    const mark = active.has(e.id) ? '*' : 'o';
    const label = labels.get(e.id);
    const dangling = e.parentId !== null && !tree.has(e.parentId) ? ` (parent ${shortId(e.parentId)} missing)` : '';
    lines.push(
      `${f.prefix}${f.connector}${mark} ${shortId(e.id)} ${shortTime(e.timestamp)} ${describeEntry(e)}${label ? ` [${label}]` : ''}${dangling}${e.id === leafId ? '  <- leaf' : ''}`,
    );
    const below = f.prefix + (f.connector === '|-- ' ? '|   ' : f.connector === '`-- ' ? '    ' : '');
    const kids = tree.children(e.id).sort(compareByTime);
    if (kids.length === 1) stack.push({ id: kids[0]!.id, prefix: below, connector: '' });
    else for (let i = kids.length - 1; i >= 0; i--) stack.push({ id: kids[i]!.id, prefix: below, connector: i === kids.length - 1 ? '`-- ' : '|-- ' });
  }
  return lines;
}
