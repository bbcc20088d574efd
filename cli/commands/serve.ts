// `sessync serve`: runs the sync service locally on the file system until SIGINT/SIGTERM.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { startLocalServer } from '../../worker/local-server.js';

function defaultDataDir(env: NodeJS.ProcessEnv): string {
  return join(env.SESSYNC_HOME || join(homedir(), '.sessync'), 'server');
}

function parsePort(v: string | boolean | string[] | undefined): number {
  if (v === undefined) return 8787;
  const s = String(v);
  const n = Number(s);
  if (!/^\d+$/.test(s) || n > 65535) throw new SessyncError('bad_input', `--port must be a number from 0 to 65535 (0 picks a free port), got "${s}"`);
  return n;
}

const command: Command = {
  summary: 'Run the sync service locally (file-system storage, no account or network needed).',
  usage: '[--port P] [--data DIR] [--host ADDR]',
  help: [
    'Starts the sessync service on this machine and prints its URL and a token for `sessync login`.',
    'On the first start it creates an admin secret and a first account; both are saved in',
    'DIR/credentials.json (mode 0600). Data lives in DIR/blobs.',
    '',
    '  --port P      port to listen on (default 8787; 0 picks a free port)',
    '  --data DIR    data folder (default $SESSYNC_HOME/server, i.e. ~/.sessync/server)',
    '  --host ADDR   interface to listen on (default 127.0.0.1)',
    '',
    'With --json the first line on stdout is {"url": ..., "token": ...}. Stops on Ctrl-C or SIGTERM.',
  ].join('\n'),
  options: {
    port: { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
  },
  async run(ctx) {
    const port = parsePort(ctx.opts.port);
    const dataDir = resolve(ctx.cwd, typeof ctx.opts.data === 'string' ? ctx.opts.data : defaultDataDir(ctx.env));
    const host = typeof ctx.opts.host === 'string' ? ctx.opts.host : '127.0.0.1';
    // Listen for the signals before announcing the URL: a caller may stop us as soon as it reads the first line.
    const stopped = new Promise<void>((done) => {
      process.once('SIGINT', () => done());
      process.once('SIGTERM', () => done());
    });
    const server = await startLocalServer({ port, dataDir, host });
    ctx.print(
      [
        `sessync service listening on ${server.url}`,
        `token: ${server.token}`,
        `${server.firstStart ? 'created' : 'using'} credentials (admin secret and token) in ${server.credentialsPath}`,
        `log in from this machine with: sessync login ${server.url} --token ${server.token}`,
        'press Ctrl-C to stop',
      ].join('\n'),
      { url: server.url, token: server.token, account: server.account, dataDir, credentials: server.credentialsPath },
    );
    await stopped;
    await server.close();
    ctx.info('sessync service stopped');
    return 0;
  },
};
export default command;
