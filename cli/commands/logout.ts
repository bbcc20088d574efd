// `sessync logout [--revoke]`: forgets the saved server URL and token (sync state and sessions stay); --revoke revokes it on the server first.
import type { Command } from '../command.js';
import { ApiClient } from '../api-client.js';
import { clearLogin, loadLogin, loginPath } from '../login-store.js';
import { isSessyncError } from '../../shared/errors.js';

const command: Command = {
  summary: 'Forget the saved server and token (--revoke: revoke the token on the server first). Sessions and sync state stay; log in again to resume syncing.',
  usage: '[--revoke]',
  usesSessions: 'none',
  options: { revoke: { type: 'boolean', default: false } },
  async run(ctx) {
    let revoked: string | undefined;
    if (ctx.opts.revoke === true) {
      const login = await loadLogin(ctx.env);
      if (login) {
        try {
          revoked = (await new ApiClient({ url: login.url, token: login.token }).revokeToken('current')).id;
        } catch (e) {
          // A token the server already refuses is as revoked as it gets; any other failure keeps the login, so the
          // user can retry rather than lose the only handle on a token that still works.
          if (!isSessyncError(e, 'unauthorized')) throw e;
          revoked = login.tokenId ?? 'current';
        }
      }
    }
    const had = await clearLogin(ctx.env);
    const human = had ? `logged out (removed ${loginPath(ctx.env)})${revoked ? `; token ${revoked} revoked on the server` : ''}` : 'not logged in';
    ctx.print(human, { loggedOut: had, ...(revoked ? { revoked } : {}) });
  },
};
export default command;
