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
  usesSessions: 'none',
  async run(ctx) {
    const [ref] = positionals(ctx, ['<token|url|id>'], 'sessync unshare <token|url|id>');
    const login = await loadLogin(ctx.env);
    if (!login) throw new SessyncError('unauthorized', 'not logged in: run `sessync login <url> --token <token>` first');
    const link = parseShareUrl(ref!);
    const api = new ApiClient({ url: login.url, token: login.token });
    // A share lives on the server that made it: revoking a link of another server here can only answer not found.
    if (link && link.server !== api.url) ctx.info(`note: the link points at ${link.server}, but you are logged in to ${api.url}`);
    const res = await api.revokeShare(link?.token ?? ref!.trim());
    ctx.print(`revoked share ${res.id}`, res);
  },
};
export default command;
