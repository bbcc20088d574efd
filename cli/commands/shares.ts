// `sessync shares`: lists the shares of the logged-in account.
import type { Command } from '../command.js';
import { ApiClient } from '../api-client.js';
import { loadLogin } from '../login-store.js';
import { SessyncError } from '../../shared/errors.js';
import type { DamagedShareInfo } from '../../shared/wire.js';

function status(s: { revoked?: boolean; expiresAt?: string }, now: number): string {
  if (s.revoked) return 'revoked';
  if (s.expiresAt === undefined) return 'unknown';
  return Date.parse(s.expiresAt) <= now ? 'expired' : 'active';
}

/** A share whose record on the server is damaged: what is known of it, then what the server says its owner can do. */
function damagedLine(s: DamagedShareInfo & { status: string }): string {
  return `${s.id}  damaged  ${s.status === 'unknown' ? 'status unknown' : s.status}${s.expiresAt ? `, expires ${s.expiresAt}` : ''}: ${s.message}`;
}

const command: Command = {
  summary: 'List your shares: id, status, expiry, session and entry count (newest first); then any the server holds damaged, with what to do.',
  usage: '',
  usesSessions: 'none',
  async run(ctx) {
    const login = await loadLogin(ctx.env);
    if (!login) throw new SessyncError('unauthorized', 'not logged in: run `sessync login <url> --token <token>` first');
    const { shares, damaged } = await new ApiClient({ url: login.url, token: login.token }).listShares();
    const now = Date.now();
    // The server sorts within a page only; newest first across all of them.
    const rows = shares.map((s) => ({ ...s, status: status(s, now) })).sort((a, b) => b.created.localeCompare(a.created));
    const lines = rows.map((s) => `${s.id}  ${s.status.padEnd(7)}  expires ${s.expiresAt}  ${s.session ?? '-'}  ${s.entryCount ?? '?'} entries  created ${s.created}`);
    // Listed apart, after the sound ones: what the server still knows of them, and how to revoke them.
    const broken = damaged.map((s) => ({ ...s, status: status(s, now) }));
    lines.push(...broken.map(damagedLine));
    ctx.print(lines.length ? lines.join('\n') : 'no shares yet: `sessync share <ref>` makes one', { shares: rows, damaged: broken });
  },
};
export default command;
