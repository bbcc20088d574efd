// `sessync resume <ref>`: opens a session by id prefix or path and reports where it continues (leaf, model, context size).
import type { Command } from '../command.js';
import { positionals, sessionOf } from '../store/locate.js';
import { resumeSession } from '../store/resume-session.js';
import { migrationNote, resumeText } from '../format/resume-text.js';

const command: Command = {
  summary: 'Resume a session by id prefix (this project first, then all) or path: restores its active branch, model and thinking level.',
  usage: '<ref>',
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync resume <ref>');
    const { session } = await sessionOf(ctx, ref!);
    const { info, migrated } = await resumeSession(session.path);
    if (migrated?.changed) ctx.info(migrationNote(migrated));
    ctx.print(resumeText(info), info);
  },
};
export default command;
