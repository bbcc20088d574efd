// `sessync serve`: runs the sync service on this machine (file system, or S3 with --store) until SIGINT/SIGTERM.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { BLOBS_DIR, startLocalServer } from '../../worker/local-server.js';
import { describeStore, openStore, storeName } from '../../worker/store/open-store.js';
import { parseStoreSpec } from '../../worker/store/store-spec.js';

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
  summary: 'Run the sync service on this machine (file-system storage by default, or S3).',
  usage: '[--port P] [--data DIR] [--host ADDR] [--store s3://BUCKET[/PREFIX] [--endpoint URL] | --store fs:DIR]',
  usesSessions: 'none',
  help: [
    'Starts the sessync service on this machine and prints its URL and a token for `sessync login`.',
    'On the first start it creates an admin secret and a first account; both are saved in',
    'DIR/credentials.json (mode 0600). Data lives in DIR/blobs unless --store says otherwise.',
    '',
    '  --port P          port to listen on (default 8787; 0 picks a free port)',
    '  --data DIR        data folder (default $SESSYNC_HOME/server, i.e. ~/.sessync/server)',
    '  --host ADDR       interface to listen on (default 127.0.0.1)',
    '  --store SPEC      where the data lives: s3://BUCKET[/PREFIX] (an existing bucket; every object',
    '                    under PREFIX/) or fs:DIR. Credentials stay in the data folder.',
    '  --endpoint URL    S3 endpoint (Ceph, MinIO, R2...); else AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL,',
    '                    else AWS. Keys and region come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,',
    '                    AWS_SESSION_TOKEN, AWS_REGION (or AWS_PROFILE and ~/.aws).',
    '',
    'With --json the first line on stdout is {"url": ..., "token": ...}. Stops on Ctrl-C or SIGTERM.',
  ].join('\n'),
  options: {
    port: { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
    store: { type: 'string' },
    endpoint: { type: 'string' },
  },
  async run(ctx) {
    const port = parsePort(ctx.opts.port);
    const dataDir = resolve(ctx.cwd, typeof ctx.opts.data === 'string' ? ctx.opts.data : defaultDataDir(ctx.env));
    const host = typeof ctx.opts.host === 'string' ? ctx.opts.host : '127.0.0.1';
    const endpoint = typeof ctx.opts.endpoint === 'string' ? ctx.opts.endpoint : undefined;
    if (endpoint !== undefined && typeof ctx.opts.store !== 'string') throw new SessyncError('bad_input', '--endpoint needs --store s3://BUCKET[/PREFIX]');
    const storeConfig =
      typeof ctx.opts.store === 'string' ? parseStoreSpec(ctx.opts.store, { cwd: ctx.cwd, env: ctx.env, ...(endpoint === undefined ? {} : { endpoint }) }) : undefined;
    // Opened (and checked) before anything is written: a wrong bucket or key leaves no credentials behind.
    const store = storeConfig ? await openStore(storeConfig) : undefined;
    // Listen for the signals before announcing the URL: a caller may stop us as soon as it reads the first line.
    const stopped = new Promise<void>((done) => {
      process.once('SIGINT', () => done());
      process.once('SIGTERM', () => done());
    });
    const server = await startLocalServer({ port, dataDir, host, ...(store && storeConfig ? { store, storeName: storeName(storeConfig) } : {}) });
    const storage = storeConfig ? describeStore(storeConfig) : `fs:${join(dataDir, BLOBS_DIR)}`;
    ctx.print(
      [
        `sessync service listening on ${server.url}`,
        `token: ${server.token}`,
        `storage: ${storage}`,
        `${server.firstStart ? 'created' : 'using'} credentials (admin secret and token) in ${server.credentialsPath}`,
        `log in from this machine with: sessync login ${server.url} --token ${server.token}`,
        'press Ctrl-C to stop',
      ].join('\n'),
      { url: server.url, token: server.token, account: server.account, dataDir, credentials: server.credentialsPath, store: storage },
    );
    await stopped;
    await server.close();
    ctx.info('sessync service stopped');
    return 0;
  },
};
export default command;
