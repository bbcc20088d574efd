// `sessync new`: starts a session for this project (header, and a model_change with --model).
import type { Command } from '../command.js';
import { CURRENT_VERSION } from '../../shared/entry.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { newId } from '../../shared/ids.js';
import { SessyncError } from '../../shared/errors.js';
import { join } from 'node:path';
import { projectDir, sessionFileName } from '../store/paths.js';
import { locate, positionals, stringOpt } from '../store/locate.js';
import { createSessionFile } from '../store/session-writer.js';
import { shortId } from '../format/short-id.js';

const USAGE = 'sessync new [--model PROVIDER/MODEL]';

const command: Command = {
  summary: 'Start a new session for this project.',
  usage: '[--model PROVIDER/MODEL]',
  usesSessions: 'needs',
  options: { model: { type: 'string' } },
  async run(ctx) {
    positionals(ctx, [], USAGE);
    const model = stringOpt(ctx, 'model');
    let provider = '';
    let modelId = '';
    if (model !== undefined) {
      const slash = model.indexOf('/');
      provider = model.slice(0, slash);
      modelId = model.slice(slash + 1);
      if (slash <= 0 || modelId === '') throw new SessyncError('bad_input', `--model must look like PROVIDER/MODEL (e.g. anthropic/claude-sonnet-4-5), got "${model}"`);
    }
    const place = await locate(ctx);
    const timestamp = new Date().toISOString();
    const header: SessionHeader = { type: 'session', version: CURRENT_VERSION, id: newId(), timestamp, cwd: place.realCwd };
    const entries: SessionEntry[] =
      model === undefined ? [] : [{ type: 'model_change', id: newId(), parentId: null, timestamp, provider, modelId }];
    const path = join(projectDir(place.root, place.realCwd), sessionFileName(timestamp, header.id));
    await createSessionFile(path, header, entries, undefined, ctx.env);
    ctx.print(`created session ${shortId(header.id)} (${header.id})\n${path}`, { id: header.id, path });
  },
};
export default command;
