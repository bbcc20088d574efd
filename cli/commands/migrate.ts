// `sessync migrate [PATH...] [--all]`: brings old session files to the current format (originals kept as .bak).
import { resolve } from 'node:path';
import type { Command } from '../command.js';
import { CURRENT_VERSION } from '../../shared/entry.js';
import { listSessions } from '../store/session-index.js';
import { locate } from '../store/locate.js';
import { migrateFile } from '../store/migrate-file.js';
import type { MigrateResult } from '../store/migrate-file.js';
import { readHeader } from '../store/session-reader.js';
import { SessyncError } from '../../shared/errors.js';

const command: Command = {
  summary: `Migrate session files to format v${CURRENT_VERSION}: the given paths, else this project's sessions (--all: every project's).`,
  usage: '[PATH...] [--all]',
  usesSessions: async (ctx) => (ctx.args.length > 0 ? null : 'needs'), // given paths are read as paths
  options: { all: { type: 'boolean', default: false } },
  async run(ctx) {
    const place = await locate(ctx);
    let paths: string[];
    if (ctx.args.length > 0) {
      if (ctx.opts.all === true) throw new SessyncError('bad_input', 'give paths or --all, not both');
      paths = ctx.args.map((p) => resolve(ctx.cwd, p));
    } else {
      paths = (await listSessions({ root: place.root, realCwd: place.realCwd, all: ctx.opts.all === true, env: ctx.env })).map((s) => s.path);
    }
    // Check every path first so a typo fails before anything is rewritten.
    for (const p of paths) {
      const h = await readHeader(p);
      if (!h.ok) throw new SessyncError('corrupt', `${p} is not a session file: ${h.reason}; nothing migrated`);
    }
    const results: MigrateResult[] = [];
    for (const p of paths) {
      const h = await readHeader(p);
      const v = h.ok ? (h.header.version ?? 1) : 0;
      results.push(v >= CURRENT_VERSION ? { path: p, fromVersion: v, toVersion: v, changed: false, problems: [] } : await migrateFile(p, ctx.env));
    }
    const human = results.length
      ? results
          .map((r) =>
            r.changed
              ? `${r.path}: v${r.fromVersion} -> v${r.toVersion}, original kept at ${r.backup}${r.problems.length ? ` (${r.problems.length} unreadable line(s) left in the backup)` : ''}`
              : `${r.path}: already v${r.toVersion}`,
          )
          .join('\n')
      : 'no session files to migrate';
    ctx.print(human, results);
  },
};
export default command;
