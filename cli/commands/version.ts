// `sessync version`: prints the CLI version (the package's, inlined by the bundler).
import type { Command } from '../command.js';
import { version } from '../../package.json';

const command: Command = {
  summary: 'Print the version.',
  usage: '',
  usesSessions: 'none',
  async run(ctx) {
    ctx.print(`sessync ${version}`, { version });
  },
};
export default command;
