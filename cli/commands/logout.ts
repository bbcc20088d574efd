// `sessync logout`: forgets the saved server URL and token (sync state and sessions stay).
import type { Command } from '../command.js';
import { clearLogin, loginPath } from '../login-store.js';

const command: Command = {
  summary: 'Forget the saved server and token. Sessions and sync state stay; log in again to resume syncing.',
  usage: '',
  async run(ctx) {
    const had = await clearLogin(ctx.env);
    ctx.print(had ? `logged out (removed ${loginPath(ctx.env)})` : 'not logged in', { loggedOut: had });
  },
};
export default command;
