// `sessync version`: prints the CLI version.
import type { Command } from '../command.js';

const command: Command = {
  summary: 'Print the version.',
  usage: '',
  async run(ctx) {
    ctx.print('sessync 0.1.0', { version: '0.1.0' });
  },
};
export default command;
