// `sessync shares`: lists the shares of the logged-in account.
import type { Command } from '../command.js';
import { ApiClient } from '../api-client.js';
import { loadLogin } from '../login-store.js';
import { SessyncError } from '../../shared/errors.js';
import type { ShareInfo } from '../../shared/wire.js';

function status(s: ShareInfo, now: number): string {
  if (s.revoked) return 'revoked';
  return Date.parse(s.expiresAt) <= now ? 'expired' : 'active';
}

const command: Command = {
  summary: 'List your shares: id, status, expiry, session and entry count (newest first).',
  usage: '',
  async run(ctx) {
    const login = await loadLogin(ctx.env);
    if (!login) throw new SessyncError('unauthorized', 'not logged in: run `sessync login <url> --token <token>` first');
    const shares = await new ApiClient({ url: login.url, token: login.token }).listShares();
    const now = Date.now();
    // The server sorts within a page only; newest first across all of them.
    const rows = shares.map((s) => ({ ...s, status: status(s, now) })).sort((a, b) => b.created.localeCompare(a.created));
    const lines = rows.map((s) => `${s.id}  ${s.status.padEnd(7)}  expires ${s.expiresAt}  ${s.session ?? '-'}  ${s.entryCount ?? '?'} entries  created ${s.created}`);
    ctx.print(lines.length ? lines.join('\n') : 'no shares yet: `sessync share <ref>` makes one', { shares: rows });
  },
};
export default command;
