// `sessync project`: this folder's project key, how it was found, and the mappings that file other keys here.
import type { Command } from '../command.js';
import { locate, positionals } from '../store/locate.js';
import { projectDir } from '../store/paths.js';
import { describeProjectKey } from '../sync/project-key.js';
import { savedProjectMap } from '../sync/project-scope.js';
import { realpath } from 'node:fs/promises';

const command: Command = {
  summary: 'Show this folder\'s project key (how sync matches it across machines), how it was found, and its mappings.',
  usage: '',
  usesSessions: 'none',
  help: [
    'The key is the normalised git remote "origin", else the repository\'s first commit, else the folder path.',
    'Sessions pulled from another machine land here when their key is this folder\'s, or is mapped to it:',
    '`sessync pull --map KEY=PATH` maps KEY to PATH and remembers it (needed for a path key, which differs between machines).',
  ].join('\n'),
  async run(ctx) {
    positionals(ctx, [], 'sessync project');
    const place = await locate(ctx);
    const info = await describeProjectKey(place.realCwd);
    const saved = await savedProjectMap(ctx.env);
    const here = await Promise.all(
      Object.entries(saved).map(async ([key, dir]) => ((await realpath(dir).catch(() => dir)) === place.realCwd ? key : null)),
    );
    const mappedHere = here.filter((k): k is string => k !== null && k !== info.key);
    const ownMapping = saved[info.key];
    const value = {
      folder: place.realCwd,
      key: info.key,
      source: info.source,
      detail: info.detail,
      sessionsDir: projectDir(place.root, place.realCwd),
      /** Where sessions of this key go on this machine when it is not the folder itself. */
      mappedTo: ownMapping ?? null,
      /** Other keys whose sessions land in this folder. */
      mappedHere,
    };
    const lines = [
      `folder    ${value.folder}`,
      `key       ${value.key}`,
      `found     ${value.detail}`,
      `sessions  ${value.sessionsDir}`,
      `mapping   ${ownMapping ? `${info.key} -> ${ownMapping}${ownMapping === place.realCwd ? ' (this folder)' : ''}` : 'none saved (sessions with this key land in the folder sync runs in)'}`,
      ...mappedHere.map((k) => `also here ${k} (saved by --map)`),
    ];
    ctx.print(lines.join('\n'), value);
  },
};
export default command;
