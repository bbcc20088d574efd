// `sessync tokens [new --name N | revoke <id>]`: this account's tokens: list them (never the secret), issue one, revoke one.
import type { Command, CommandContext } from '../command.js';
import { ApiClient } from '../api-client.js';
import { requireLogin } from '../login-store.js';
import { SessyncError } from '../../shared/errors.js';
import { TOKEN_NAME_MAX, type TokenInfo } from '../../shared/wire.js';

async function client(ctx: CommandContext): Promise<ApiClient> {
  const login = await requireLogin(ctx.env);
  return new ApiClient({ url: login.url, token: login.token });
}

function row(t: TokenInfo): string {
  return `${t.current ? '*' : ' '} ${t.id}  ${(t.name ?? '-').padEnd(20)}  created ${t.created.slice(0, 10)}  last used ${t.lastUsed ?? 'never'}${t.current ? '  (this machine)' : ''}`;
}

const command: Command = {
  summary: 'List this account\'s tokens (id, name, created, last used; * = this machine\'s), issue one (`new --name N`) or revoke one (`revoke <id>`).',
  usage: '[new --name NAME | revoke <id>]',
  usesSessions: 'none',
  help: [
    'The secret of a token is shown once, by `tokens new`; the server keeps only its SHA-256.',
    'A revoked token is refused on every request at once; the machine that held it keeps its sessions and',
    'unpushed entries, and syncs them after `sessync login` with a valid token.',
  ].join('\n'),
  options: { name: { type: 'string' } },
  async run(ctx) {
    const [verb, ...rest] = ctx.args;
    if (verb === undefined || verb === 'list') {
      if (rest.length) throw new SessyncError('bad_input', 'usage: sessync tokens');
      const tokens = await (await client(ctx)).listTokens();
      ctx.print(tokens.length ? tokens.map(row).join('\n') : 'no tokens listed', { tokens });
      return;
    }
    if (verb === 'new') {
      if (rest.length) throw new SessyncError('bad_input', 'usage: sessync tokens new --name NAME');
      const name = typeof ctx.opts.name === 'string' ? ctx.opts.name.trim() : undefined;
      if (name === undefined || name === '' || name.length > TOKEN_NAME_MAX) throw new SessyncError('bad_input', `sessync tokens new needs --name NAME (1 to ${TOKEN_NAME_MAX} characters), e.g. --name laptop`);
      const t = await (await client(ctx)).createToken(name);
      ctx.print(`${t.token}\nissued token ${t.id} "${name}": log in with it on that machine (\`sessync login <url> --token ...\`); it is not shown again`, t);
      return;
    }
    if (verb === 'revoke') {
      const [id, ...more] = rest;
      if (!id || more.length) throw new SessyncError('bad_input', 'usage: sessync tokens revoke <id> (ids from `sessync tokens`)');
      const login = await requireLogin(ctx.env);
      const r = await new ApiClient({ url: login.url, token: login.token }).revokeToken(id);
      const self = login.tokenId === r.id ? ' (this machine\'s own: run `sessync login` to sync from here again)' : '';
      ctx.print(`revoked token ${r.id}: every request with it is refused from now on${self}`, r);
      return;
    }
    throw new SessyncError('bad_input', `unknown "tokens ${verb}": use \`sessync tokens\`, \`tokens new --name NAME\` or \`tokens revoke <id>\``);
  },
};
export default command;
