// Test helpers for the service routes: build valid batches and call the app like a client; no node:* so workerd can use them too.
import type { Hono } from 'hono';
import type { AppEnv } from '../../worker/app-env.js';
import type { BlobStore } from '../../worker/store/blob-store.js';
import type { PushBatchRequest, SessionMetaInput } from '../../shared/wire.js';
import { sha256Hex } from '../../worker/sha256.js';

/** An admin secret that passes the server's minimum (32+ random-looking characters), shared by the suites and the workerd config. */
export const TEST_ADMIN_SECRET = 'q7Vb2LxN9wKe4TzR8mHc3JpY6sDf1GaU';

export interface Fetcher {
  fetch(req: Request): Promise<Response> | Response;
}

export function entryLine(host: string, seq: number, i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'message',
    id: `e-${host}-${seq}-${i}`,
    parentId: i === 0 ? null : `e-${host}-${seq}-${i - 1}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq, i)).toISOString(),
    message: { role: 'user', content: `entry ${i} of batch ${seq} from ${host}` },
    ...extra,
  };
}

/** A valid push request; `lines` overrides the entries (objects are serialised, strings used as they are). */
export async function makeBatch(opts: {
  session: string;
  host: string;
  seq: number;
  count?: number;
  lines?: (string | Record<string, unknown>)[];
  batchId?: string;
  meta?: PushBatchRequest['meta'];
}): Promise<PushBatchRequest> {
  const lines = opts.lines ?? Array.from({ length: opts.count ?? 3 }, (_, i) => entryLine(opts.host, opts.seq, i));
  const body = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
  const req: PushBatchRequest = {
    envelope: {
      session: opts.session,
      host: opts.host,
      seq: opts.seq,
      batchId: opts.batchId ?? `b-${opts.host}-${opts.seq}`,
      entryCount: lines.length,
      sha256: await sha256Hex(body),
      encoding: 'jsonl',
    },
    body,
  };
  if (opts.meta) req.meta = opts.meta;
  return req;
}

export function metaFor(session: string, cwd = '/home/a/src/app'): SessionMetaInput {
  return {
    header: { type: 'session', version: 3, id: session, timestamp: '2026-01-01T00:00:00.000Z', cwd },
    projectKey: 'github.com/a/app',
    name: 'a test session',
  };
}

/** Calls the service the way a client does. */
export class TestClient {
  constructor(
    private readonly target: Fetcher,
    public token?: string,
    private readonly base = 'http://sessync.test',
  ) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any; text: string }> {
    const h: Record<string, string> = { ...headers };
    if (this.token && !('authorization' in h)) h.authorization = `Bearer ${this.token}`;
    let payload: string | Uint8Array<ArrayBuffer> | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : body instanceof Uint8Array ? (body as Uint8Array<ArrayBuffer>) : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const res = await this.target.fetch(new Request(this.base + path, { method, headers: h, body: payload }));
    const text = await res.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null; // the caller asserts on json; a non-JSON answer shows up there as null
    }
    return { status: res.status, json, text };
  }

  push(req: PushBatchRequest) {
    return this.call('POST', `/v1/sessions/${encodeURIComponent(req.envelope.session)}/batches`, req);
  }

  pull(session: string, cursor: Record<string, number> = {}) {
    return this.call('POST', `/v1/sessions/${encodeURIComponent(session)}/pull`, { cursor });
  }

  /** Pulls until `more` is false; returns every batch and the final cursor. */
  async pullAll(session: string, cursor: Record<string, number> = {}): Promise<{ batches: any[]; cursor: Record<string, number>; requests: number }> {
    const batches: any[] = [];
    let requests = 0;
    for (;;) {
      const r = await this.pull(session, cursor);
      requests++;
      if (r.status !== 200) throw new Error(`pull answered ${r.status}: ${r.text}`);
      batches.push(...r.json.batches);
      cursor = r.json.cursor;
      if (!r.json.more) return { batches, cursor, requests };
    }
  }
}

/** Wraps a Hono app with an env (bindings) as a Fetcher. */
export function appFetcher(app: Hono<AppEnv>, env: Record<string, unknown> = {}): Fetcher {
  return { fetch: (req) => app.fetch(req, env) };
}

/** Creates an account through the admin API and returns its id and token. */
export async function adminCreateAccount(target: Fetcher, adminSecret: string): Promise<{ account: string; token: string }> {
  const r = await new TestClient(target, adminSecret).call('POST', '/v1/admin/accounts', { name: 'test' });
  if (r.status !== 201) throw new Error(`create account answered ${r.status}: ${r.text}`);
  return r.json;
}

/** Every key under `prefix`, following the store's pages. */
export async function storedKeys(store: BlobStore, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const p = await store.list(cursor ? { prefix, cursor } : { prefix });
    out.push(...p.keys);
    cursor = p.cursor;
  } while (cursor);
  return out;
}

/** Every key and its etag, to prove a refused request changed nothing. */
export async function storeSnapshot(store: BlobStore): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const k of await storedKeys(store)) out.set(k, (await store.get(k))!.etag);
  return out;
}
