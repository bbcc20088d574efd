// `sessync share <ref> [--at ENTRY] [--expires 7d] [--no-redact]`: uploads one branch, encrypted, and prints the link.
import { realpath } from 'node:fs/promises';
import type { Command } from '../command.js';
import { ApiClient, reportRetries } from '../api-client.js';
import { loadLogin } from '../login-store.js';
import { SessyncError } from '../../shared/errors.js';
import { describeCounts, type RedactOptions } from '../../shared/redact.js';
import { ENTRY_ID_RE, LIMITS, NAME_RE } from '../../shared/wire.js';
import { positionals, stringOpt } from '../store/locate.js';
import { AGENT_OPTION, whenPi } from '../agents/agent-run.js';
import { shareSourceFor } from '../agents/agent-share.js';
import { DEFAULT_EXPIRES, parseExpires } from '../share/expires.js';
import { machineSecrets } from '../share/redact-options.js';
import { prepareShare } from '../share/prepare-share.js';
import { buildShareUrl } from '../share/share-url.js';

const USAGE = 'sessync share <ref> [--at ENTRY] [--expires 7d] [--no-redact]';

/** The folders whose .env files are read: where the command runs and where the session ran (when it still exists here). */
async function projectDirs(cwd: string, sessionCwd: string): Promise<string[]> {
  const dirs = [await realpath(cwd)];
  const other = await realpath(sessionCwd).catch(() => null); // the session may come from another machine's path
  if (other && !dirs.includes(other)) dirs.push(other);
  return dirs;
}

const command: Command = {
  summary: 'Share a session\'s branch (root to ENTRY, default the active leaf) as an end-to-end encrypted, expiring link.',
  usage: '<ref> [--at ENTRY] [--expires 7d] [--no-redact] [--agent pi|claude-code|codex|all]',
  usesSessions: whenPi('needs'),
  help: [
    'The branch is redacted (API keys and tokens, private keys, Authorization headers, values of the project\'s',
    '.env and of secret-looking environment variables, the home path) and re-scanned; anything left blocks the share.',
    'It is then encrypted here with a fresh key that lives only in the link\'s fragment (after #): the server stores',
    'ciphertext and a hash of the token, never the key. --expires takes 30m, 12h, 7d, 2w (default 7d, at most 366d).',
  ].join('\n'),
  options: { at: { type: 'string' }, expires: { type: 'string' }, 'no-redact': { type: 'boolean', default: false }, ...AGENT_OPTION },
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], USAGE);
    const expiresAt = parseExpires(stringOpt(ctx, 'expires') ?? DEFAULT_EXPIRES);
    const login = await loadLogin(ctx.env);
    if (!login) throw new SessyncError('unauthorized', 'not logged in: a share is uploaded to your sessync server; run `sessync login <url> --token <token>` first');
    const { header, branch, atId, notes } = await shareSourceFor(ctx, ref!, stringOpt(ctx, 'at'));

    let redact: RedactOptions | null = null;
    if (ctx.opts['no-redact'] !== true) {
      const found = await Promise.all((await projectDirs(ctx.cwd, header.cwd)).map((dir) => machineSecrets(dir, ctx.env)));
      redact = { secrets: found.flatMap((m) => m.options.secrets ?? []), homeDir: found[0]!.options.homeDir! };
    }
    const prepared = await prepareShare(header, branch, redact);
    if (prepared.redacted) ctx.info(`redacted: ${describeCounts(prepared.redacted)}`);
    else ctx.info('redaction skipped (--no-redact)');

    if (prepared.ciphertext.length > LIMITS.maxShareBytes) {
      throw new SessyncError('too_large', `the branch is ${prepared.ciphertext.length} bytes after compression and encryption; a share may be at most ${LIMITS.maxShareBytes}. Share an earlier entry with --at.`);
    }
    ctx.info(`uploading to ${login.url}`);
    const api = ApiClient.forLogin(login, { onRetry: reportRetries((t, d) => ctx.waiting(t, d)) });
    const res = await api.createShare({
      ciphertext: prepared.ciphertext,
      expiresAt,
      ...(NAME_RE.test(header.id) ? { session: header.id } : {}),
      ...(atId !== null && ENTRY_ID_RE.test(atId) ? { entryId: atId } : {}),
      entryCount: branch.length,
    });
    const url = buildShareUrl(api.url, res.token, prepared.key);
    ctx.print(`${url}\nshare ${res.id}: ${branch.length} entries, expires ${res.expiresAt}. Revoke with \`sessync unshare ${res.id}\`.`, {
      url,
      id: res.id,
      expiresAt: res.expiresAt,
      entryCount: branch.length,
      redacted: prepared.redacted,
      ...(notes?.length ? { notes } : {}),
    });
  },
};
export default command;
