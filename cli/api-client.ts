// HTTP client for the sessync service: one method per route, zod-checked answers, retries for retryable errors only.
import { z } from 'zod';
import { encodeFrames, FRAMES_TYPE } from '../shared/batch-frames.js';
import { SessyncError, isSessyncError, type ErrorCode } from '../shared/errors.js';
import { toFrame, toJsonRequest } from './sync/push-wire.js';
import { failedBeforeSending, fetchTransport, nodeTransport, withoutUserinfo, type Transport, type TransportResponse } from './http-transport.js';
import { readPullFrames } from './sync/pull-frames.js';
import {
  AccountKeyResponseSchema,
  SealBatchResponseSchema,
  type AccountKeyResponse,
  type PutAccountKeyRequest,
  type PutSessionKeyRequest,
  type SealBatchRequest,
  type SealBatchResponse,
  type SealedSessionMetaInput,
  ChangesResponseSchema,
  CreateOwnTokenResponseSchema,
  DeleteSessionResponseSchema,
  ListTokensResponseSchema,
  RevokeTokenResponseSchema,
  UndeleteSessionResponseSchema,
  type CreateOwnTokenResponse,
  type DamagedShareInfo,
  type DeleteSessionResponse,
  type Tombstone,
  type TokenInfo,
  CreateShareResponseSchema,
  ErrorBodySchema,
  HealthResponseSchema,
  ListSharesResponseSchema,
  NAME_RE,
  PullResponseSchema,
  PullManyResponseSchema,
  type PullManyResponse,
  PushBatchResponseSchema,
  PushBatchesResponseSchema,
  type PushBatchesResponse,
  RevokeShareResponseSchema,
  SessionMetaResponseSchema,
  ShareBlobResponseSchema,
  WhoamiResponseSchema,
  type ChangesResponse,
  type CreateShareRequest,
  type CreateShareResponse,
  type Cursor,
  type HealthResponse,
  type PullResponse,
  type PullPage,
  type PullPageItem,
  type PushBatchItem,
  type PushBatchResponse,
  type SessionMetaResponse,
  type ShareBlobResponse,
  type ShareInfo,
  type UnrevokedShare,
  type WhoamiResponse,
} from '../shared/wire.js';

/** One session's part of POST /v1/pulls. */
export interface PullItem {
  session: string;
  cursor: Cursor;
  withMeta?: true;
}

export interface ApiClientOptions {
  url: string;
  token?: string;
  /** The token's account (as /v1/whoami answered at login): names this machine's sync state for server + account. */
  account?: string;
  /** Requests go through this fetch (tests, an in-process app); by default through node:http (see http-transport). */
  fetch?: typeof fetch;
  /** Extra attempts after the first for retryable failures (default 6: about 6-12 s, long enough for a server restart). */
  retries?: number;
  /** First backoff delay; doubles each attempt, with full jitter (default 250 ms). */
  baseDelayMs?: number;
  /** Longest single backoff delay (default 5 s). */
  maxDelayMs?: number;
  /** Per-attempt timeout (default 60 s). */
  timeoutMs?: number;
  /**
   * Until the server has answered once, a connection nobody accepts (refused, unknown host, no route) is retried
   * only this long (default 1 s): nothing listens there, and a retry will not help soon. After an answer the same
   * failure is most likely a restart, and gets the whole retry schedule.
   */
  unreachableRetryMs?: number;
  /** Called before each retry: lets a UI say what it waits for (see retryNote). */
  onRetry?: (err: SessyncError, attempt: number, delayMs: number, limit: RetryLimit) => void;
}

/** Connection failures where no server took the connection at all (refused, no such host, no route, no answer to connect). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/** What ends the retries: a count, or (nothing answering yet) a time budget. */
export type RetryLimit = { retries: number } | { unreachableMs: number };

/** One line for a human while a call waits to retry: what failed, how long it waits, when it gives up. */
export function retryNote(err: SessyncError, attempt: number, delayMs: number, limit: RetryLimit): string {
  const until = 'retries' in limit ? `of ${limit.retries}` : `(nothing answers; giving up after ${limit.unreachableMs / 1000} s)`;
  return `${err.message}; waiting ${(delayMs / 1000).toFixed(1)} s for retry ${attempt} ${until}`;
}

/** Where a command says what it waits for: the human line and the same facts for --json. */
export type WaitReport = (text: string, detail: Record<string, unknown>) => void;

/** An onRetry that reports each wait through `report`. */
export function reportRetries(report: WaitReport): NonNullable<ApiClientOptions['onRetry']> {
  return (err, attempt, delayMs, limit) => report(retryNote(err, attempt, delayMs, limit), { code: err.code, attempt, waitMs: delayMs, ...limit });
}

const KNOWN_CODES = new Set<string>([
  'bad_input', 'not_found', 'ambiguous', 'conflict', 'locked', 'corrupt', 'unsupported_version',
  'unauthorized', 'forbidden', 'too_large', 'gone', 'unavailable', 'wrong_server', 'internal',
  'key_mismatch', 'encryption_required', 'not_encrypted',
]);

/** Statuses that a later attempt can fix (server restarting, overloaded, a proxy in between). */
const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

export class ApiClient {
  readonly url: string;
  readonly account: string | undefined;
  /** Every HTTP attempt made, retries included: benches and no-op checks read it. */
  requestCount = 0;
  /** Request body bytes sent, retries included. */
  bytesSent = 0;
  /** Heads the server listed that no sessync server can hold (see allHeads): left out, for the caller to report. */
  ignoredHeads: ChangesResponse['heads'] = [];
  /**
   * Whether the server takes frames: null until it has answered a frames request, false once it refused one (then
   * every push goes as JSON, as a client from before frames sends it).
   */
  takesFrames: boolean | null = null;
  /**
   * Whether a request's body is copied out of this process (written to a socket) before its answer comes, so its
   * buffers are the caller's again once answered. Not with a fetch given: an app in this process may keep them.
   */
  readonly bodiesCopied: boolean;
  private readonly token: string | undefined;
  private readonly transport: Transport;
  private readonly retries: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly timeoutMs: number;
  private readonly unreachableRetryMs: number;
  private readonly onRetry: ApiClientOptions['onRetry'];
  /** The server has answered at least once (any HTTP status): a refused connection after that is a restart. */
  private answered = false;
  /** The server refused a pull's `withMeta` (it predates the flag): pulls go without it. */
  private metaRefused = false;
  /** Whether the server refused a pull's `withMeta`: it sends no metas in pages, so they are asked one session at a time. */
  get refusesMeta(): boolean {
    return this.metaRefused;
  }

  constructor(opts: ApiClientOptions) {
    this.url = normaliseUrl(opts.url);
    this.account = opts.account;
    this.token = opts.token;
    this.transport = opts.fetch ? fetchTransport(opts.fetch) : nodeTransport;
    this.bodiesCopied = opts.fetch === undefined;
    this.retries = opts.retries ?? 6;
    this.baseDelayMs = opts.baseDelayMs ?? 250;
    this.maxDelayMs = opts.maxDelayMs ?? 5_000;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.unreachableRetryMs = opts.unreachableRetryMs ?? 1_000;
    this.onRetry = opts.onRetry;
  }

  /** A client for the saved login: every sync command builds it here, so all of them name the same state folder. */
  static forLogin(login: { url: string; token: string; account?: string }, opts: Omit<ApiClientOptions, 'url' | 'token' | 'account'> = {}): ApiClient {
    return new ApiClient({ ...opts, url: login.url, token: login.token, ...(login.account !== undefined ? { account: login.account } : {}) });
  }

  /** GET /v1/health: proves the server is a sessync service (else wrong_server). */
  async health(): Promise<HealthResponse> {
    return this.call('GET', '/v1/health', undefined, HealthResponseSchema, { auth: false });
  }

  async whoami(): Promise<WhoamiResponse> {
    return this.call('GET', '/v1/whoami', undefined, WhoamiResponseSchema);
  }

  /** POST /v1/sessions/:session/batches: one frame, or JSON for a server from before frames (see pushFrames). */
  async pushBatch(item: PushBatchItem): Promise<PushBatchResponse> {
    const path = `/v1/sessions/${enc(item.envelope.session)}/batches`;
    return this.pushFrames(path, [item], PushBatchResponseSchema, () => toJsonRequest(item));
  }

  /**
   * POST /v1/batches: the items as frames (raw bodies), or as JSON for a server from before frames. A server from
   * before the route answers 404 not_found; one with a lower cap answers 413 with `details.server.maxBatches`.
   */
  async pushBatches(items: readonly PushBatchItem[]): Promise<PushBatchesResponse> {
    return this.pushFrames('/v1/batches', items, PushBatchesResponseSchema, () => new PrebuiltJson(`{"batches":[${items.map((i) => JSON.stringify(toJsonRequest(i))).join(',')}]}`));
  }

  /** Sends the items as one frames body (one copy of the bodies); a server that refuses frames gets `json()` instead, and every push after. */
  private async pushFrames<T>(path: string, items: readonly PushBatchItem[], schema: z.ZodType<T>, json: () => unknown): Promise<T> {
    if (this.takesFrames !== false) {
      try {
        const r = await this.call('POST', path, new RawBody(encodeFrames(items.map(toFrame)), FRAMES_TYPE), schema);
        this.takesFrames = true;
        return r;
      } catch (e) {
        if (this.takesFrames === true || !refusesFrames(e)) throw e;
        this.takesFrames = false;
      }
    }
    return this.call('POST', path, json(), schema);
  }

  /**
   * POST /v1/pulls as JSON: one page of each session (with its meta where `withMeta`). A server from before it
   * answers 404; Workers, 413 (one per request). Sync asks pullPages, which takes frames.
   */
  async pullMany(sessions: readonly PullItem[]): Promise<PullManyResponse> {
    return this.withoutMetaIfRefused(sessions.some((s) => s.withMeta), (withMeta) => this.call('POST', '/v1/pulls', { sessions: pullItems(sessions, withMeta) }, PullManyResponseSchema));
  }

  /** One page of a session as JSON; `withMeta`: its meta in the answer too (absent from an older server's: ask sessionMeta). */
  async pull(session: string, cursor: Cursor, o: { withMeta?: boolean } = {}): Promise<PullResponse> {
    return this.withoutMetaIfRefused(o.withMeta === true, (withMeta) => this.call('POST', `/v1/sessions/${enc(session)}/pull`, pullBody(cursor, withMeta), PullResponseSchema));
  }

  /**
   * POST /v1/pulls asking for frames: bodies come raw (JSONL as UTF-8, ciphertext unencoded); a server from before
   * frames answers JSON, read the same. A malformed frames answer is refused whole (wrong_server), before any use.
   */
  async pullPages(sessions: readonly PullItem[]): Promise<{ results: PullPageItem[] }> {
    const names = sessions.map((s) => s.session);
    return this.withoutMetaIfRefused(sessions.some((s) => s.withMeta), (withMeta) =>
      this.call<{ results: PullPageItem[] }>('POST', '/v1/pulls', { sessions: pullItems(sessions, withMeta) }, PullManyResponseSchema, {
        frames: (bytes) => ({ results: readPullFrames(bytes, names, 'POST /v1/pulls') }),
      }),
    );
  }

  /** One page of a session asking for frames, as pullPages. */
  async pullPage(session: string, cursor: Cursor, o: { withMeta?: boolean } = {}): Promise<PullPage> {
    const where = `POST /v1/sessions/${session}/pull`;
    return this.withoutMetaIfRefused(o.withMeta === true, (withMeta) =>
      this.call<PullPage>('POST', `/v1/sessions/${enc(session)}/pull`, pullBody(cursor, withMeta), PullResponseSchema, {
        frames: (bytes) => {
          const item = readPullFrames(bytes, [session], where)[0]!;
          if (!item.ok) throw serverError(item.error, 200, item.error.details);
          const { ok: _, session: __, ...page } = item;
          return page;
        },
      }),
    );
  }

  /**
   * A pull sent with `withMeta` while the server is not known to refuse it; a server from before the flag refuses
   * the unknown key (400 naming it), and is then asked without it for the rest of this client's life.
   */
  private async withoutMetaIfRefused<T>(wanted: boolean, send: (withMeta: boolean) => Promise<T>): Promise<T> {
    if (!wanted || this.metaRefused) return send(false);
    try {
      return await send(true);
    } catch (e) {
      if (!isSessyncError(e, 'bad_input') || !e.message.includes('withMeta')) throw e;
      this.metaRefused = true;
      return send(false);
    }
  }

  async changes(page?: string): Promise<ChangesResponse> {
    const q = page === undefined ? '' : `?page=${encodeURIComponent(page)}`;
    return this.call('GET', `/v1/changes${q}`, undefined, ChangesResponseSchema);
  }

  /**
   * Every head of the account, following pages. A head whose session or host id is not a valid name, or whose
   * seq is not a positive integer, is left out (and kept in `ignoredHeads`): a session id becomes a file name on
   * this machine, and one like `../../x` from a broken or hostile server must never reach a path.
   */
  async allHeads(): Promise<ChangesResponse['heads']> {
    return (await this.feed()).heads;
  }

  /** Every head of the account and the sessions deleted on the server (tombstones), following pages. */
  async feed(): Promise<{ heads: ChangesResponse['heads']; deleted: Tombstone[] }> {
    const heads: ChangesResponse['heads'] = [];
    const deleted = new Map<string, Tombstone>();
    this.ignoredHeads = [];
    let page: string | undefined;
    do {
      const r = await this.changes(page);
      for (const h of r.heads) (NAME_RE.test(h.session) && NAME_RE.test(h.host) && h.seq >= 1 && h.seq <= 999_999_999_999 ? heads : this.ignoredHeads).push(h);
      for (const t of r.deleted ?? []) if (NAME_RE.test(t.session)) deleted.set(t.session, t);
      page = r.nextPage;
    } while (page !== undefined);
    return { heads, deleted: [...deleted.values()] };
  }

  /** DELETE /v1/sessions/:session, one step; see deleteSession for the whole deletion. */
  async deleteSessionStep(session: string, host: string): Promise<DeleteSessionResponse> {
    return this.call('DELETE', `/v1/sessions/${enc(session)}`, { host }, DeleteSessionResponseSchema);
  }

  /** Deletes the session on the server, calling again while the server says objects are left (each call is bounded). */
  async deleteSession(session: string, host: string): Promise<DeleteSessionResponse & { steps: number }> {
    let removed = 0;
    let sharesRevoked = 0;
    // By id: a share is in `sharesNotRevoked` of the answer that found it and in `sharesStillUnrevoked` of every answer
    // (of a server that keeps notes), so a rerun after a lost answer still names it, and names it once.
    const notRevoked = new Map<string, UnrevokedShare>();
    for (let steps = 1; ; steps++) {
      const { sharesStillUnrevoked, ...r } = await this.deleteSessionStep(session, host);
      removed += r.removed;
      sharesRevoked += r.sharesRevoked;
      const known = notRevoked.size;
      for (const s of [...(r.sharesNotRevoked ?? []), ...(sharesStillUnrevoked ?? [])]) notRevoked.set(s.id, s);
      const sharesNotRevoked = [...notRevoked.values()];
      if (r.complete) return { ...r, removed, sharesRevoked, steps, ...(sharesNotRevoked.length ? { sharesNotRevoked } : {}) };
      // A step that removed nothing, revoked nothing, found no share it could not revoke and is not complete means a
      // server that makes no progress: do not spin.
      if (r.removed === 0 && r.sharesRevoked === 0 && notRevoked.size === known) throw new SessyncError('internal', `the server made no progress deleting session ${session}; run the command again later`);
    }
  }

  async undeleteSession(session: string): Promise<z.infer<typeof UndeleteSessionResponseSchema>> {
    return this.call('POST', `/v1/sessions/${enc(session)}/undelete`, undefined, UndeleteSessionResponseSchema);
  }

  async listTokens(): Promise<TokenInfo[]> {
    return (await this.call('GET', '/v1/tokens', undefined, ListTokensResponseSchema)).tokens;
  }

  /** Sent once (see OnceOnly): a retry after the server made the token would make a second. */
  async createToken(name?: string): Promise<CreateOwnTokenResponse> {
    return this.call('POST', '/v1/tokens', name === undefined ? {} : { name }, CreateOwnTokenResponseSchema, {
      once: { what: 'create a token', check: 'run `sessync tokens` to see whether it was made (revoke a token made twice there) before trying again' },
    });
  }

  /** `current` revokes the token this client holds. Sent once: a second DELETE after the first revoked it answers 404 (or 401). */
  async revokeToken(id: string): Promise<z.infer<typeof RevokeTokenResponseSchema>> {
    return this.call('DELETE', `/v1/tokens/${enc(id)}`, undefined, RevokeTokenResponseSchema, {
      once: { what: `revoke token ${id}`, check: id === 'current' ? 'try a command with this token: a refusal naming the revocation means it is revoked' : 'run `sessync tokens` to see whether it is still listed' },
    });
  }

  /** The line that reports one of `ignoredHeads`. */
  static ignoredHeadNote(h: ChangesResponse['heads'][number]): string {
    return `ignored a head the server listed with an invalid name: session ${JSON.stringify(h.session.slice(0, 80))}, host ${JSON.stringify(h.host.slice(0, 80))}, seq ${h.seq}`;
  }

  async sessionMeta(session: string): Promise<SessionMetaResponse> {
    return this.call('GET', `/v1/sessions/${enc(session)}`, undefined, SessionMetaResponseSchema);
  }

  /** GET /v1/account/key: whether the account is end-to-end encrypted, and its key check. */
  async accountKey(): Promise<AccountKeyResponse> {
    return this.call('GET', '/v1/account/key', undefined, AccountKeyResponseSchema);
  }

  /** PUT /v1/account/key: makes the account encrypted (no `replaces`) or rotates its key. */
  async putAccountKey(req: PutAccountKeyRequest): Promise<AccountKeyResponse> {
    return this.call('PUT', '/v1/account/key', req, AccountKeyResponseSchema);
  }

  /** PUT /v1/sessions/:session/key: the session's data key re-wrapped under the new account key (rotation). */
  async putSessionKey(session: string, req: PutSessionKeyRequest): Promise<SessionMetaResponse> {
    return this.call('PUT', `/v1/sessions/${enc(session)}/key`, req, SessionMetaResponseSchema);
  }

  /** PUT .../batches/:host/:seq/seal: a stored plaintext batch replaced by its ciphertext (conversion). */
  async sealStoredBatch(req: SealBatchRequest): Promise<SealBatchResponse> {
    const e = req.envelope;
    return this.call('PUT', `/v1/sessions/${enc(e.session)}/batches/${enc(e.host)}/${e.seq}/seal`, req, SealBatchResponseSchema);
  }

  /** PUT /v1/sessions/:session/meta/seal: a stored plaintext meta replaced by the sealed one (conversion). */
  async sealStoredMeta(session: string, req: SealedSessionMetaInput): Promise<SessionMetaResponse> {
    return this.call('PUT', `/v1/sessions/${enc(session)}/meta/seal`, req, SessionMetaResponseSchema);
  }

  /** Sent once (see OnceOnly): a retry after the server made the share would make a second link. */
  async createShare(req: CreateShareRequest): Promise<CreateShareResponse> {
    return this.call('POST', '/v1/shares', req, CreateShareResponseSchema, {
      once: { what: 'create a share', check: 'run `sessync shares` to see whether it was made (its link is shown only once: revoke it there and share again)' },
    });
  }

  /** Every share of the account, following `nextPage` (the server answers at most a few dozen per page). */
  async listShares(): Promise<{ shares: ShareInfo[]; damaged: DamagedShareInfo[] }> {
    const shares: ShareInfo[] = [];
    const damaged: DamagedShareInfo[] = [];
    let page: string | undefined;
    do {
      const q = page === undefined ? '' : `?page=${encodeURIComponent(page)}`;
      const r = await this.call('GET', `/v1/shares${q}`, undefined, ListSharesResponseSchema);
      shares.push(...r.shares);
      damaged.push(...(r.damaged ?? []));
      // A server that hands back the page it was asked for would loop forever: stop with a clear error instead.
      if (r.nextPage !== undefined && r.nextPage === page) {
        throw new SessyncError('internal', `the server answered GET /v1/shares?page=${page} with the same page token again; update the server`);
      }
      page = r.nextPage;
    } while (page !== undefined);
    return { shares, damaged };
  }

  /** Sent once: a second DELETE after the first revoked the share answers 404. */
  async revokeShare(idOrToken: string): Promise<z.infer<typeof RevokeShareResponseSchema>> {
    return this.call('DELETE', `/v1/shares/${enc(idOrToken)}`, undefined, RevokeShareResponseSchema, {
      once: { what: 'revoke the share', check: 'run `sessync shares` to see whether it is still listed' },
    });
  }

  /** GET /v1/shares/:token/blob: no auth, the token is the capability. */
  async shareBlob(token: string): Promise<ShareBlobResponse> {
    return this.call('GET', `/v1/shares/${enc(token)}/blob`, undefined, ShareBlobResponseSchema, { auth: false });
  }

  /** One request with retries: only errors marked retryable are tried again, after backoff with full jitter. */
  /** `body` is serialised here, unless it is `{ json }`: text the caller built. */
  /** `frames`: the answer may come as frames (Accept names them); this reads it (JSON answers go through `schema`). */
  /** `once`: the request must not reach the server twice (see OnceOnly). */
  /**
   * Asked before each attempt of every request: a run stopped by Ctrl-C or SIGTERM throws `interrupted` here, so it
   * stops between requests, never inside one (see cli/sync/interrupt.ts).
   */
  beforeRequest?: () => void;

  private async call<T>(method: string, path: string, body: unknown, schema: z.ZodType<T>, o: { auth?: boolean; frames?: (bytes: Uint8Array) => T; once?: OnceOnly } = {}): Promise<T> {
    const payload = body === undefined ? undefined : body instanceof RawBody ? body : body instanceof PrebuiltJson ? body.json : JSON.stringify(body);
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      this.beforeRequest?.();
      try {
        return await this.once(method, path, payload, schema, o.auth !== false, o.frames, o.once === undefined);
      } catch (e) {
        let err = isSessyncError(e) ? e : new SessyncError('internal', String((e as Error)?.message ?? e), { cause: e });
        if (err.retryable && o.once && !surelyNotActedOn(err)) err = mayHaveActed(err, o.once);
        if (!err.retryable || attempt >= this.retries) throw err;
        const cap = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** attempt);
        const delay = Math.round(cap / 2 + Math.random() * (cap / 2));
        const budget = !this.answered && isUnreachable(err);
        if (budget && Date.now() - started + delay > this.unreachableRetryMs) throw err;
        this.onRetry?.(err, attempt + 1, delay, budget ? { unreachableMs: this.unreachableRetryMs } : { retries: this.retries });
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  private async once<T>(method: string, path: string, payload: string | RawBody | undefined, schema: z.ZodType<T>, auth: boolean, frames: ((bytes: Uint8Array) => T) | undefined, idempotent: boolean): Promise<T> {
    // A server from before frames ignores the first type and answers JSON, which is read as always.
    const headers: Record<string, string> = { accept: frames ? `${FRAMES_TYPE}, application/json` : 'application/json' };
    if (payload !== undefined) headers['content-type'] = payload instanceof RawBody ? payload.type : 'application/json';
    if (payload instanceof RawBody) headers['content-length'] = String(payload.bytes);
    if (auth) {
      if (!this.token) throw new SessyncError('unauthorized', 'not logged in: run `sessync login <url> --token <token>` first');
      headers.authorization = `Bearer ${this.token}`;
    }
    this.requestCount++;
    if (payload !== undefined) this.bytesSent += payload instanceof RawBody ? payload.bytes : Buffer.byteLength(payload);
    let res: TransportResponse;
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), this.timeoutMs);
    try {
      res = await this.transport(this.url + path, { method, headers, ...(payload === undefined ? {} : { body: payload instanceof RawBody ? payload.chunks : payload }), signal: ctrl.signal, ...(idempotent ? {} : { idempotent: false }) });
    } catch (e) {
      clearTimeout(timer);
      // The transport's own verdict (a redirect it will not follow, a URL it refuses): the same on every try.
      if (isSessyncError(e)) throw e;
      // fetch puts the system's code in `cause`; node:http on the error itself.
      const why = (e as { cause?: { code?: string } })?.cause?.code ?? (e as { code?: string })?.code ?? (e as Error)?.message ?? String(e);
      const details = failedBeforeSending(e) ? { reason: why, notSent: true } : { reason: why };
      throw new SessyncError('unavailable', `cannot reach the sessync server at ${this.url} (${why})${CHECK_SERVER}`, { retryable: true, cause: e, details });
    }
    this.answered = true;
    if (frames && res.ok && isFramesAnswer(res)) {
      let bytes: Uint8Array;
      try {
        bytes = await res.bytes();
      } catch (e) {
        throw new SessyncError('unavailable', `connection to ${this.url} dropped while reading the answer`, { retryable: true, cause: e });
      } finally {
        clearTimeout(timer);
      }
      return frames(bytes);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      throw new SessyncError('unavailable', `connection to ${this.url} dropped while reading the answer`, { retryable: true, cause: e });
    } finally {
      clearTimeout(timer);
    }
    let json: unknown;
    let isJson = true;
    try {
      json = JSON.parse(text);
    } catch {
      isJson = false; // judged below: a non-JSON answer means a proxy error page or not a sessync server
    }
    if (res.ok) {
      const parsed = isJson ? schema.safeParse(json) : null;
      if (!parsed?.success) {
        throw new SessyncError('wrong_server', `${this.url} answered ${method} ${path} with something that is not a sessync answer: is this the URL of a sessync server?`, { details: { status: res.status, body: text.slice(0, 200) } });
      }
      return parsed.data;
    }
    const errBody = isJson ? ErrorBodySchema.safeParse(json) : null;
    if (errBody?.success) {
      const { code, message, details } = errBody.data.error;
      if (code === 'unauthorized') {
        throw new SessyncError('unauthorized', `the server at ${this.url} refused the token (${message}): run \`sessync login ${this.url} --token <token>\` with a valid token`);
      }
      throw serverError(errBody.data.error, res.status, details);
    }
    if (RETRYABLE_STATUS.has(res.status)) {
      throw new SessyncError('unavailable', `the server at ${this.url} answered HTTP ${res.status}: it may be restarting`, { retryable: true, details: { status: res.status } });
    }
    if (res.status === 401) {
      throw new SessyncError('unauthorized', `the server at ${this.url} refused the token: run \`sessync login ${this.url} --token <token>\` with a valid token`);
    }
    throw new SessyncError('wrong_server', `${this.url} answered HTTP ${res.status} without a sessync error body: is this the URL of a sessync server?`, { details: { status: res.status, body: text.slice(0, 200) } });
  }
}

function isFramesAnswer(res: TransportResponse): boolean {
  return (res.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase() === FRAMES_TYPE;
}

function pullItems(sessions: readonly PullItem[], withMeta: boolean): PullItem[] {
  return withMeta ? [...sessions] : sessions.map(({ withMeta: _, ...s }) => s);
}

function pullBody(cursor: Cursor, withMeta: boolean): { cursor: Cursor; withMeta?: true } {
  return withMeta ? { cursor, withMeta: true } : { cursor };
}

/** Serialised JSON handed to `call` as it is. */
class PrebuiltJson {
  constructor(readonly json: string) {}
}

/** A binary body (frames) as its chunks, and its media type, handed to `call` as it is: each attempt sends the chunks. */
class RawBody {
  /** Bytes of all the chunks: the request's Content-Length. */
  readonly bytes: number;
  constructor(readonly chunks: readonly Uint8Array[], readonly type: string) {
    let n = 0;
    for (const c of chunks) n += c.byteLength;
    this.bytes = n;
  }
}

/**
 * A server from before frames refusing a frames body: 415 (a proxy or server that checks the media type), or the 400
 * an older sessync answers when it reads the body as JSON text (raw bytes are not UTF-8; text frames are not JSON).
 * A sessync server that takes frames reads them as bytes and says "frames: ..." of a malformed one, never either.
 */
function refusesFrames(e: unknown): boolean {
  if (!isSessyncError(e)) return false;
  const status = (e.details as { status?: unknown } | undefined)?.status;
  return status === 415 || (status === 400 && e.code === 'bad_input' && /request body is not valid (JSON|UTF-8)/.test(e.message));
}

/**
 * A server's error answer as the error a command sees: codes this client does not know become `internal`, and the
 * server's own details (when it sent any) ride in `details.server`. Also for the per-item errors of POST /v1/batches.
 */
export function serverError(e: { code: string; message: string; retryable?: boolean | undefined }, status: number, server?: unknown): SessyncError {
  const known = (KNOWN_CODES.has(e.code) ? e.code : 'internal') as ErrorCode;
  const retryable = e.retryable ?? (RETRYABLE_STATUS.has(status) || known === 'unavailable');
  return new SessyncError(known, `server: ${e.message}`, { retryable, details: { status, code: e.code, ...(server === undefined ? {} : { server }) } });
}

/**
 * A request that creates or revokes something (a token, a share). The server acts on it as it reads it, so when the
 * connection drops after it was sent, the client cannot know whether that happened; sending it again could make a
 * second token or link, or answer "no such token" for one just revoked. So it is sent again only when it surely never
 * reached the server. `what` names the action and `check` how the user finds out, for the error that says so.
 */
interface OnceOnly {
  what: string;
  check: string;
}

/**
 * Statuses a server or proxy answers without passing the request on or acting on it (request timeout, too early,
 * too many requests). A 5xx can come from a proxy after the server acted (a gateway timeout), so it is not here.
 */
const NOT_ACTED_STATUS = new Set([408, 425, 429]);

/** The advice that ends an "cannot reach the server" message; mayHaveActed drops it (that request did reach one). */
const CHECK_SERVER = ': check the URL and that the server is running';

/** Whether a retryable failure surely left the server untouched: no byte sent, or a status that refuses before acting. */
function surelyNotActedOn(err: SessyncError): boolean {
  const d = err.details as { notSent?: unknown; status?: unknown } | undefined;
  return d?.notSent === true || (typeof d?.status === 'number' && NOT_ACTED_STATUS.has(d.status));
}

/** The error for a once-only request that failed after the server may have acted: not retryable, and says how to check. */
function mayHaveActed(err: SessyncError, once: OnceOnly): SessyncError {
  // Without "check the URL and that the server is running": the request was sent, so the URL reached a server.
  const what = err.message.replace(CHECK_SERVER, '').replace(/^cannot reach /, 'lost the connection to ');
  return new SessyncError('unavailable', `${what}; the request to ${once.what} was sent, so the server may have done it: ${once.check}`, {
    retryable: false,
    cause: err,
    details: { ...(err.details as Record<string, unknown> | undefined), sentOnce: true },
  });
}

/** Whether the error is of no connection at all (refused, no such host, no route, timed out connecting): not of an answer. */
export function isUnreachable(err: SessyncError): boolean {
  const reason = (err.details as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' && UNREACHABLE.has(reason);
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

/** Accepts `host:port` and trailing slashes; the client always talks to `<origin><path>/v1/...`. */
export function normaliseUrl(url: string): string {
  let u = url.trim();
  if (!/^https?:\/\//i.test(u)) u = `http://${u}`;
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    // Echoed without any `user:pass@`: the password must not end up in scrollback or a log.
    throw new SessyncError('bad_input', `"${withoutUserinfo(url)}" is not a URL: use e.g. http://127.0.0.1:8787 or https://sessync.example.com`);
  }
  // node:http would send them as Basic auth on every request (fetch refused such URLs); the server reads only a token.
  // The message leaves the password out: it would end up in a terminal's scrollback or a log.
  if (parsed.username !== '' || parsed.password !== '') {
    parsed.username = '';
    parsed.password = '';
    throw new SessyncError('bad_input', `the server URL must not hold a user name or password (as in https://user:pass@host): sessync authenticates with a token; use \`sessync login ${parsed.toString().replace(/\/+$/, '')} --token <token>\``);
  }
  return u.replace(/\/+$/, '');
}
