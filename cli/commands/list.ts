// `sessync list [--all]`: this project's sessions (or every project's), newest first, from headers and a cache only.
import type { Command } from '../command.js';
import { listSessions } from '../store/session-index.js';
import { locate, positionals } from '../store/locate.js';
import { shortId } from '../format/short-id.js';
import { shortTime } from '../format/describe-entry.js';

const command: Command = {
  summary: 'List sessions of this project (--all: of every project), newest entry first.',
  help: 'Sorted by the time of each session\'s newest entry (as pi does), so every machine lists the same order; the time shown is that entry\'s.',
  usage: '[--all]',
  options: { all: { type: 'boolean', default: false } },
  async run(ctx) {
    positionals(ctx, [], 'sessync list [--all]');
    const place = await locate(ctx);
    const all = ctx.opts.all === true;
    const skipped: { path: string; reason: string }[] = [];
    const rows = await listSessions({ root: place.root, realCwd: place.realCwd, all, skipped });
    for (const s of skipped) ctx.info(`skipped ${s.path}: ${s.reason}`);
    const human =
      rows.length === 0
        ? `no sessions ${all ? `in ${place.root}` : `for ${place.realCwd}`} (start one with \`sessync new\`)`
        : rows
            .map((r) => {
              const count = r.messageCount === undefined ? '   ?' : String(r.messageCount).padStart(4);
              const what = [r.name, all ? r.cwd : undefined].filter(Boolean).join('  ');
              return `${shortId(r.id)}  ${shortTime(r.lastEntryAt)}  ${count} msgs  ${what}`.trimEnd();
            })
            .join('\n');
    ctx.print(human, rows);
  },
};
export default command;
