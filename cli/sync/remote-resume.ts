// For `resume <ref>`: a session that exists only on the server is found by id prefix, pulled into its project folder here.
import { SessyncError } from '../../shared/errors.js';
import type { WaitReport } from '../api-client.js';
import { realCwd as toRealCwd } from '../store/paths.js';
import { projectKey } from './project-key.js';
import { pullSession } from './pull.js';
import { withPullJournal } from './pull-journal.js';
import { matchRemote, openSync, placer, withSyncLock } from './sync-run.js';

export interface RemoteResumeOptions {
  /** --cwd of the command: a session of this project (same project key) lands in this folder. */
  cwd: string;
  env?: NodeJS.ProcessEnv;
  maps?: Record<string, string>;
  note?: (text: string) => void;
  wait?: WaitReport;
}

/**
 * Finds the session whose id starts with `ref` among the server's sessions (one /v1/changes walk), pulls all of it
 * into the local project folder for its project key, and returns the new local file's path.
 * Throws not_found (nothing matches, or not logged in: 'unauthorized'), ambiguous (several match).
 */
export async function pullRemoteSession(ref: string, opts: RemoteResumeOptions): Promise<string> {
  const env = opts.env ?? process.env;
  const ctx = await openSync(env, { ...(opts.note ? { note: opts.note } : {}), ...(opts.wait ? { wait: opts.wait } : {}) });
  return withSyncLock(ctx, async () => {
    const matches = matchRemote(await ctx.api.allHeads(), ref);
    if (matches.length === 0) throw new SessyncError('not_found', `no session matches "${ref}" here or on the server ${ctx.api.url}`);
    if (matches.length > 1) {
      throw new SessyncError('ambiguous', `"${ref}" matches ${matches.length} sessions on the server: ${matches.slice(0, 10).join(', ')}; give more characters`, { details: { candidates: matches } });
    }
    const rc = await toRealCwd(opts.cwd).catch(() => undefined);
    const cwdKey = rc ? await projectKey(rc) : undefined;
    const place = placer(ctx, { ...(opts.maps ? { maps: opts.maps } : {}), ...(cwdKey ? { cwdKey } : {}), ...(rc ? { realCwd: rc } : {}) });
    const r = await withPullJournal(ctx, () => pullSession(ctx, matches[0]!, { placeFor: place }));
    return r.path;
  });
}
