// `sessync doctor <ref>`: reports corrupt lines, a torn tail, dangling parents and duplicate ids; exit 1 when any.
import type { Command } from '../command.js';
import { positionals, sessionOf, unlessPathRef } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { shortId } from '../format/short-id.js';
import { lockPath } from '../store/file-lock.js';
import { stat } from 'node:fs/promises';

const command: Command = {
  summary: 'Check a session file: corrupt lines, lines holding several entries, a torn last line, dangling parents, duplicate ids. Exit 1 when it finds any.',
  usage: '<ref>',
  usesSessions: unlessPathRef('needs'),
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync doctor <ref>');
    const { session } = await sessionOf(ctx, ref!);
    const s = await readSession(session.path);
    const problems = [
      ...s.splitLines.map((x) => ({
        kind: 'split',
        line: x.line,
        reason: `one line held ${x.values} JSON values with no newline between them (two writers raced); ${x.values - x.bad} loaded as separate entries${x.bad ? `, ${x.bad} not usable (below)` : ''}`,
      })),
      ...s.problems.map((p) => ({ kind: 'line', line: p.line, reason: p.reason })),
      ...s.tree.problems.map((p) => ({ kind: 'entry', entryId: p.entryId, reason: p.reason })),
    ];
    const lockHeld = await stat(lockPath(session.path)).then(
      () => true,
      () => false,
    );
    const notes: string[] = [];
    if (s.tornTail) notes.push('the last line was cut off mid-write; the next append ends it first, nothing before it is affected');
    if (s.fileVersion < s.version) notes.push(`format v${s.fileVersion}: it is migrated on the next write (or run \`sessync migrate ${session.path}\`)`);
    if (lockHeld) notes.push(`a lock file exists (${lockPath(session.path)}): a writer is running, or one died and the next writer takes it over`);
    const report = { id: s.header.id, path: session.path, entries: s.tree.size, leafId: s.tree.leafId, ok: problems.length === 0, problems, notes };
    const human = [
      `${session.path}: ${s.tree.size} entries, ${problems.length ? `${problems.length} problem(s)` : 'no problems'}`,
      ...problems.map((p) => `  ${'line' in p ? `line ${p.line}` : `entry ${shortId(p.entryId!)}`}: ${p.reason}`),
      ...notes.map((n) => `  note: ${n}`),
    ].join('\n');
    ctx.print(human, report);
    return problems.length ? 1 : 0;
  },
};
export default command;
