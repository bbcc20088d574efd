// `sessync login <url> [--token T]`: checks that the URL is a sessync server and the token works, then saves both.
import type { Command } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { API_VERSION } from '../../shared/wire.js';
import { ApiClient, normaliseUrl } from '../api-client.js';
import { saveLogin } from '../login-store.js';

async function readStdinLine(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split('\n')[0]!.trim();
}

const command: Command = {
  summary: 'Log in to a sessync server: checks the server and the token, saves them in $SESSYNC_HOME/login.json (mode 0600).',
  usage: '<url> [--token T]',
  help: 'Without --token the token is read from $SESSYNC_TOKEN, else from the first line of stdin (so it stays out of shell history).',
  options: { token: { type: 'string' } },
  async run(ctx) {
    const [raw, ...extra] = ctx.args;
    if (!raw || extra.length) throw new SessyncError('bad_input', 'usage: sessync login <url> [--token T]');
    const url = normaliseUrl(raw);
    let token = typeof ctx.opts.token === 'string' ? ctx.opts.token : ctx.env.SESSYNC_TOKEN;
    if (!token && !(ctx.stdin as NodeJS.ReadStream).isTTY) token = await readStdinLine(ctx.stdin);
    if (!token) throw new SessyncError('bad_input', 'a token is required: sessync login <url> --token T (the server prints one on its first start)');
    const api = new ApiClient({ url, token, retries: 1 });
    const health = await api.health();
    if (health.api !== API_VERSION) {
      throw new SessyncError('wrong_server', `${url} speaks sessync API ${health.api}; this sessync speaks ${API_VERSION}: upgrade the older side`);
    }
    const who = await api.whoami();
    const path = await saveLogin({ url, token, account: who.account }, ctx.env);
    ctx.print(`logged in to ${url} as account ${who.account} (saved in ${path})`, { url, account: who.account, path });
  },
};
export default command;
