// `sessync continue`: resumes the newest session of this project.
import type { Command } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { listSessions } from '../store/session-index.js';
import { locate, positionals } from '../store/locate.js';
import { resumeSession } from '../store/resume-session.js';
import { migrationNote, resumeText } from '../format/resume-text.js';

const command: Command = {
  summary: 'Resume the newest session of this project.',
  usage: '',
  usesSessions: 'needs',
  async run(ctx) {
    positionals(ctx, [], 'sessync continue');
    const place = await locate(ctx);
    const newest = (await listSessions({ root: place.root, realCwd: place.realCwd, also: place.also, ...(place.flat ? { flat: true } : {}), env: ctx.env }))[0];
    if (!newest) throw new SessyncError('not_found', `no session for ${place.realCwd} in ${place.root}; start one with \`sessync new\``);
    const { info, migrated } = await resumeSession(newest.path, ctx.env);
    if (migrated?.changed) ctx.info(migrationNote(migrated));
    ctx.print(resumeText(info), info);
  },
};
export default command;
