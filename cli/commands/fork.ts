// `sessync fork <ref> [--at ENTRY]`: a new session holding the branch up to ENTRY (default the leaf), same entry ids.
import { join } from 'node:path';
import type { Command } from '../command.js';
import { CURRENT_VERSION } from '../../shared/entry.js';
import type { SessionHeader } from '../../shared/entry.js';
import { newId } from '../../shared/ids.js';
import { positionals, sessionOf, stringOpt } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { resolveEntry } from '../store/resolve.js';
import { createSessionFile } from '../store/session-writer.js';
import { projectDir, sessionFileName } from '../store/paths.js';
import { shortId } from '../format/short-id.js';

/** Header fields a migrated v1 file keeps for its model; the fork keeps them too so its context has the same model. */
const CARRIED = ['provider', 'modelId', 'thinkingLevel'] as const;

const command: Command = {
  summary: 'Fork a session: a new session with the branch from the root to ENTRY (default: the leaf). The source is unchanged.',
  usage: '<ref> [--at ENTRY]',
  usesSessions: 'needs',
  help: 'The new header names the source by its file (parentSession, as pi writes it: pi\'s session picker shows the fork under it)\nand by session and entry id (parentSessionId, parentEntry), which hold on any machine (a pull points parentSession at the local file).',
  options: { at: { type: 'string' } },
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], 'sessync fork <ref> [--at ENTRY]');
    const at = stringOpt(ctx, 'at');
    const { place, session } = await sessionOf(ctx, ref!);
    const s = await readSession(session.path);
    const atId = at === undefined ? s.tree.leafId : resolveEntry(s.tree, at).id;
    const branch = atId === null ? [] : s.tree.branch(atId);
    const timestamp = new Date().toISOString();
    const header: SessionHeader = {
      type: 'session',
      version: CURRENT_VERSION,
      id: newId(),
      timestamp,
      cwd: s.header.cwd,
      parentSession: session.path,
      parentSessionId: s.header.id,
    };
    if (atId !== null) header.parentEntry = atId;
    for (const k of CARRIED) if (s.header[k] !== undefined) header[k] = s.header[k];
    const path = join(projectDir(place.root, s.header.cwd), sessionFileName(timestamp, header.id));
    await createSessionFile(path, header, branch, undefined, ctx.env);
    ctx.print(`forked ${shortId(s.header.id)} at ${atId ? shortId(atId) : '(empty)'} into ${shortId(header.id)} (${branch.length} entries)\n${path}`, {
      id: header.id,
      path,
      parentSession: session.path,
      parentSessionId: s.header.id,
      parentEntry: atId,
      entryCount: branch.length,
    });
  },
};
export default command;
