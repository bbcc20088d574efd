// `sessync login <url> [--token T] [--name N] [--keep-token]`: checks the server and the token, issues this machine its own token, saves it.
import { hostname } from 'node:os';
import type { Command } from '../command.js';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { API_VERSION, TOKEN_NAME_MAX } from '../../shared/wire.js';
import { ApiClient, normaliseUrl } from '../api-client.js';
import { loadLogin, saveLogin, type Login } from '../login-store.js';
import { loginKey } from '../keys/login-key.js';
import { LOSS_WARNING } from '../keys/key-actions.js';

async function readStdinLine(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split('\n')[0]!.trim();
}

/** The machine's name, as a token name: what `sessync tokens` shows and `tokens revoke` is chosen by. */
export function machineName(): string {
  return (hostname().trim() || 'this machine').slice(0, TOKEN_NAME_MAX);
}

/** A once-only request that failed after it was sent (see the api client's mayHaveActed). */
function sentOnce(e: unknown): e is SessyncError {
  return isSessyncError(e) && (e.details as { sentOnce?: unknown } | undefined)?.sentOnce === true;
}

/**
 * The answer to "issue this machine a token" was lost: the server may have made one. The api client's advice (run
 * `sessync tokens`) cannot work here, as nothing is saved until the token arrives, so say what does.
 */
function lostNewToken(e: SessyncError, url: string, name: string): SessyncError {
  const why = e.message.slice(0, Math.max(0, e.message.indexOf('; the request to'))) || e.message;
  return new SessyncError(
    'unavailable',
    `${why}; the server may have made this machine's token, but nothing was saved: run \`sessync login ${url}\` again, then \`sessync tokens\` lists any token named "${name}" that is not current: revoke it (\`sessync tokens revoke <id>\`)`,
    { retryable: false, cause: e, details: e.details },
  );
}

const command: Command = {
  summary: 'Log in to a sessync server: checks the server and the token, issues this machine its own token (named after it), saves it in $SESSYNC_HOME/login.json (mode 0600).',
  usage: '<url> [--token T] [--name NAME] [--keep-token] [--no-encrypt]',
  usesSessions: 'none',
  help: [
    'Without --token the token is read from $SESSYNC_TOKEN, else from the first line of stdin (so it stays out of shell history).',
    'The given token only proves the account: login issues a token of this machine\'s own, named after it (--name to choose),',
    'so a lost machine can be revoked alone (`sessync tokens revoke <id>` from another one). --keep-token saves the given token instead.',
    'A new account (no sessions yet) becomes end-to-end encrypted here: its key is made on this machine and printed once',
    '(stderr; with --json in the result). --no-encrypt keeps a new account in plaintext. On an encrypted account, import',
    'the key from another machine (`sessync key export` there, `sessync key import` here) before push and pull.',
  ].join('\n'),
  options: { token: { type: 'string' }, name: { type: 'string' }, 'keep-token': { type: 'boolean', default: false }, 'no-encrypt': { type: 'boolean', default: false } },
  async run(ctx) {
    const [raw, ...extra] = ctx.args;
    if (!raw || extra.length) throw new SessyncError('bad_input', 'usage: sessync login <url> [--token T] [--name NAME] [--keep-token]');
    const url = normaliseUrl(raw);
    let token = typeof ctx.opts.token === 'string' ? ctx.opts.token : ctx.env.SESSYNC_TOKEN;
    if (!token && !(ctx.stdin as NodeJS.ReadStream).isTTY) token = await readStdinLine(ctx.stdin);
    if (!token) throw new SessyncError('bad_input', 'a token is required: sessync login <url> --token T (the server prints one on its first start)');
    const name = typeof ctx.opts.name === 'string' ? ctx.opts.name.trim() : machineName();
    if (name === '' || name.length > TOKEN_NAME_MAX) throw new SessyncError('bad_input', `--name must be 1 to ${TOKEN_NAME_MAX} characters`);
    const api = new ApiClient({ url, token, retries: 1 });
    const health = await api.health();
    if (health.api !== API_VERSION) {
      throw new SessyncError('wrong_server', `${url} speaks sessync API ${health.api}; this sessync speaks ${API_VERSION}: upgrade the older side`);
    }
    const who = await api.whoami();
    let login: Login = { url, token, account: who.account };
    if (ctx.opts['keep-token'] !== true) {
      try {
        const issued = await api.createToken(name);
        login = { url, token: issued.token, account: who.account, tokenId: issued.id, ...(issued.name ? { tokenName: issued.name } : {}) };
      } catch (e) {
        if (sentOnce(e)) throw lostNewToken(e, url, name);
        // A server from before per-machine tokens has no /v1/tokens: the given token still works, so keep it.
        if (!isSessyncError(e, 'not_found')) throw e;
        ctx.info(`note: ${url} cannot issue tokens (an older server); saving the given token`);
      }
    }
    const previous = await loadLogin(ctx.env).catch(() => null);
    const path = await saveLogin(login, ctx.env);
    // This machine's token from an earlier login to the same account is replaced: revoke it so it cannot linger.
    if (previous?.tokenId && previous.token !== login.token && previous.token !== token && normaliseUrl(previous.url) === url && previous.account === who.account) {
      try {
        await new ApiClient({ url, token: previous.token, retries: 1 }).revokeToken('current');
      } catch (e) {
        // Already revoked is the goal reached; anything else is said, so the old token does not linger unnoticed.
        if (!isSessyncError(e, 'unauthorized')) ctx.info(`note: could not revoke this machine's previous token ${previous.tokenId} (${(e as Error).message}); \`sessync tokens revoke ${previous.tokenId}\` does it`);
      }
    }
    const what = login.tokenId ? ` with token ${login.tokenId} "${login.tokenName ?? name}" for this machine` : '';
    const key = await loginKey(ApiClient.forLogin(login, { retries: 1 }), ctx.env, who.account, ctx.opts['no-encrypt'] === true);
    if (key.created) ctx.info(`${key.created}\nwarning: ${LOSS_WARNING}; this is the account's end-to-end key, shown once (\`sessync key export\` shows it again)`);
    if (key.note) ctx.info(`note: ${key.note}`);
    const e2e = { encrypted: key.encrypted, ...(key.keyId ? { keyId: key.keyId } : {}), ...(key.hasKey !== undefined ? { hasKey: key.hasKey } : {}), ...(key.created ? { key: key.created, warning: LOSS_WARNING } : {}) };
    const enc = key.created ? '; the account is now end-to-end encrypted' : key.encrypted ? `; end-to-end encrypted${key.hasKey ? '' : ' (import the key before syncing)'}` : '';
    ctx.print(`logged in to ${url} as account ${who.account}${what} (saved in ${path})${enc}`, { url, account: who.account, path, ...(login.tokenId ? { tokenId: login.tokenId, tokenName: login.tokenName } : {}), ...e2e });
  },
};
export default command;
