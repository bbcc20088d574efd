// `sessync unshare <token|url|id>`: revokes a share; its link answers 410 from then on.
import type { Command } from '../command.js';
import { ApiClient } from '../api-client.js';
import { loadLogin } from '../login-store.js';
import { SessyncError } from '../../shared/errors.js';
import { positionals } from '../store/locate.js';
import { parseShareUrl } from '../share/share-url.js';

const command: Command = {
  summary: 'Revoke a share (by the link, its token or its id from `sessync shares`): the link stops working and the server drops the ciphertext.',
  usage: '<token|url|id>',
  async run(ctx) {
    const [ref] = positionals(ctx, ['<token|url|id>'], 'sessync unshare <token|url|id>');
    const login = await loadLogin(ctx.env);
    if (!login) throw new SessyncError('unauthorized', 'not logged in: run `sessync login <url> --token <token>` first');
    const target = parseShareUrl(ref!)?.token ?? ref!.trim();
    const res = await new ApiClient({ url: login.url, token: login.token }).revokeShare(target);
    ctx.print(`revoked share ${res.id}`, res);
  },
};
export default command;
