// Gathers the pull pages that several sessions' pulls are ready to ask for into one POST /v1/pulls (older servers: one each).
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { LIMITS, type Cursor, type PullPage } from '../../shared/wire.js';
import { serverError, type ApiClient, type PullItem } from '../api-client.js';
import { Coalescer, type Waiting } from './coalescer.js';

/** Room a session takes in a request: its id and cursor, as JSON (the request limit is the small-body one, 1 MiB). */
const PULL_REQUEST_BYTES = 1024 * 1024 - 16 * 1024;

/**
 * Each session's pull runs as before (merge, fsync, cursor saved after) and calls `pull` where it would call
 * `api.pullPage`; sessions pulled at once share requests, so a first pull of N sessions costs about N / target page
 * requests, not N. Each session gets exactly the page the single route would have answered (or fewer batches and
 * `more`, when the request's bytes went to the sessions before it).
 */
export class PullBatcher extends Coalescer<PullItem, PullPage> {
  /** null: not known yet; false: the server takes one session per request (older, or Workers). */
  private multi: boolean | null = null;

  constructor(private readonly api: ApiClient, target: number = LIMITS.maxSessionsPerPull) {
    super(target, PULL_REQUEST_BYTES, LIMITS.maxSessionsPerPull);
  }

  pull(session: string, cursor: Cursor, o: { withMeta?: boolean } = {}): Promise<PullPage> {
    if (this.multi === false) return this.api.pullPage(session, cursor, o);
    const item: PullItem = { session, cursor: { ...cursor }, ...(o.withMeta ? { withMeta: true as const } : {}) };
    return this.enqueue(item, Buffer.byteLength(JSON.stringify(item)));
  }

  protected async deliver(group: Waiting<PullItem, PullPage>[]): Promise<void> {
    let results;
    try {
      results = (await this.api.pullPages(group.map((w) => w.req))).results;
      this.multi = true;
    } catch (e) {
      // Before POST /v1/pulls (404), or a server that takes one session per request (413): each session alone.
      if (this.multi !== true && (isSessyncError(e, 'not_found') || isSessyncError(e, 'too_large'))) {
        this.multi = false;
        await Promise.all(group.map((w) => this.api.pullPage(w.req.session, w.req.cursor, { withMeta: w.req.withMeta === true }).then(w.resolve, w.reject)));
        return;
      }
      throw e;
    }
    group.forEach((w, i) => {
      const r = results[i];
      if (!r || r.session !== w.req.session) return w.reject(new SessyncError('wrong_server', `the server answered POST /v1/pulls out of order (item ${i})`));
      if (r.ok) {
        const { ok: _, session: __, ...page } = r;
        w.resolve(page);
      } else w.reject(serverError(r.error, 200, r.error.details));
    });
  }
}
