// The hostile-input table: bad requests a client can send, each with the 4xx and message it must get; run on Node and in workerd.
import { expect } from 'vitest';
import { ErrorBodySchema, LIMITS, type PushBatchRequest, type SessionMetaInput } from '../../shared/wire.js';
import { sha256Hex } from '../../worker/sha256.js';
import { entryLine, makeBatch, metaFor } from './routes-helpers.js';
import { checkFor, makeSealedBatch, randomBase64, sealOf, sealPath, sealedMeta } from './sealed-helpers.js';

/** What the runner sets up before the table runs: two accounts, session s1 (host h, batch 1) of alice, two shares of alice. */
export interface HostileContext {
  alice: string;
  bob: string;
  adminSecret: string;
  aliceAccount: string;
  liveShareId: string;
  revokedShareToken: string;
  bobAccount: string;
  /** Id of a second token of alice's (not the one the cases send). */
  aliceTokenId: string;
  /** A token of alice's that was revoked. */
  revokedToken: string;
  /**
   * An end-to-end encrypted account (key k1): session p1 pushed before the key (jsonl batch h/1, plaintext meta, as
   * a conversion finds it), session e1 pushed after it (aes-256-gcm batch h/1, sealed meta).
   */
  carol: string;
}

export interface HostileRequest {
  method: string;
  path: string;
  /** Whose bearer value goes in Authorization (default alice); a string is sent as the whole header. */
  auth?: 'alice' | 'bob' | 'carol' | 'admin' | 'none' | { header: string };
  body?: string | Uint8Array;
}

export interface HostileCase {
  name: string;
  status: number;
  /** The error message must match; for `page` cases the HTML page is checked instead. */
  message: RegExp;
  page?: boolean;
  request: (ctx: HostileContext) => HostileRequest | Promise<HostileRequest>;
}

const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const deepArray = (n: number) => '['.repeat(n) + ']'.repeat(n);
const FUTURE = () => new Date(Date.now() + 24 * 3600 * 1000).toISOString();

/** Batch 2 of host h in s1 (batch 1 exists), with its meta, changed by `edit`; the hash is recomputed unless `keepSha`. */
async function push(edit: (r: PushBatchRequest & Record<string, any>) => void, opts: { keepSha?: boolean; path?: string } = {}): Promise<HostileRequest> {
  const req = await makeBatch({ session: 's1', host: 'h', seq: 2, meta: metaFor('s1') });
  edit(req);
  if (!opts.keepSha) req.envelope.sha256 = await sha256Hex(req.body);
  return { method: 'POST', path: opts.path ?? '/v1/sessions/s1/batches', body: JSON.stringify(req) };
}

/** A valid push whose JSON text is changed by `edit` (for what JSON.stringify cannot write, like an own __proto__ key). */
async function editText(edit: (text: string) => string): Promise<HostileRequest> {
  const r = await push(() => undefined);
  return { ...r, body: edit(r.body as string) };
}

/** A push whose body is exactly `lines` (raw JSONL lines). */
const pushLines = (...lines: string[]) => push((r) => {
  r.body = lines.join('\n') + '\n';
  r.envelope.entryCount = lines.length;
});
const entry = (extra: Record<string, unknown>) => JSON.stringify(entryLine('h', 2, 0, extra));
const header = (extra: Record<string, unknown>) => push((r) => (r.meta = { ...metaFor('s1'), header: { ...metaFor('s1').header, ...extra } }));
const raw = (method: string, path: string, body?: string, auth?: HostileRequest['auth']): HostileRequest => ({ method, path, ...(body === undefined ? {} : { body }), ...(auth ? { auth } : {}) });
const pull = (body: string, session = 's1', auth?: HostileRequest['auth']) => raw('POST', `/v1/sessions/${session}/pull`, body, auth);
const share = (body: Record<string, unknown>) => raw('POST', '/v1/shares', JSON.stringify({ ciphertext: 'AAAA', expiresAt: FUTURE(), ...body }));
const admin = (path: string, body?: string) => raw('POST', path, body, 'admin');
const newToken = (body: string, auth?: HostileRequest['auth']) => raw('POST', '/v1/tokens', body, auth);
const quota = (body: string, account: (c: HostileContext) => string = (c) => c.aliceAccount) => (c: HostileContext) => raw('PUT', `/v1/admin/accounts/${account(c)}/quota`, body, 'admin');
const delSession = (session: string, body?: string, auth?: HostileRequest['auth']) => raw('DELETE', `/v1/sessions/${session}`, body, auth);

/** A request of carol's (the encrypted account). */
const asCarol = (r: HostileRequest | Promise<HostileRequest>) => async (): Promise<HostileRequest> => ({ ...(await r), auth: 'carol' });
const json = (method: string, path: string, body: unknown) => raw(method, path, typeof body === 'string' ? body : JSON.stringify(body));
const putKey = (body: unknown) => json('PUT', '/v1/account/key', body);
/** A push of an aes-256-gcm batch 2 of host h in e1 (batch 1 exists), changed by `edit`. */
async function sealedPush(edit: (r: PushBatchRequest & Record<string, any>) => void, session = 'e1', rehash = false): Promise<HostileRequest> {
  const req = await makeSealedBatch({ session, host: 'h', seq: session === 'e1' ? 2 : 1, meta: sealedMeta('k1') });
  edit(req);
  if (rehash) req.envelope.sha256 = await sha256Hex(req.body);
  return { method: 'POST', path: `/v1/sessions/${session}/batches`, body: JSON.stringify(req) };
}
const sealedMetaOf = (r: PushBatchRequest) => r.meta as ReturnType<typeof sealedMeta>;
const sessionKey = (session: string, body: unknown) => json('PUT', `/v1/sessions/${session}/key`, body);
/** The seal of carol's stored jsonl batch p1 h/1 (the batch setUpHostile pushed), changed by `edit`; rehashed unless `keepSha`. */
async function sealP1(edit: (r: Awaited<ReturnType<typeof sealOf>> & Record<string, any>) => void = () => undefined, path = sealPath('p1', 'h', 1), keepSha = false): Promise<HostileRequest> {
  const stored = await makeBatch({ session: 'p1', host: 'h', seq: 1 });
  const req = await sealOf(stored);
  edit(req);
  if (!keepSha) req.envelope.sha256 = await sha256Hex(req.body);
  return { method: 'PUT', path, body: JSON.stringify(req) };
}
const sealMeta = (session: string, body: unknown) => json('PUT', `/v1/sessions/${session}/meta/seal`, body);

/** The account key, the no-downgrade rules of an encrypted account, the re-wrap and the two seal routes. */
const ENCRYPTION_CASES: HostileCase[] = [
  // PUT /v1/account/key.
  { name: 'account key: empty body', status: 400, message: /put account key: .*body is empty/, request: () => putKey('') },
  { name: 'account key: keyId with a slash', status: 400, message: /keyId/, request: () => putKey({ keyId: 'k/1', check: checkFor('x') }) },
  { name: 'account key: check not base64url', status: 400, message: /check: base64url/, request: () => putKey({ keyId: 'k9', check: 'a b' }) },
  { name: 'account key: unknown field', status: 400, message: /unrecognized key/i, request: () => putKey({ keyId: 'k9', check: checkFor('x'), key: 'secret' }) },
  { name: 'account key: body over 1 MiB', status: 413, message: /larger than/, request: () => putKey({ keyId: 'k9', check: 'c'.repeat(1024 * 1024) }) },
  { name: 'account key: without a token', status: 401, message: /missing bearer token/, request: () => raw('GET', '/v1/account/key', undefined, 'none') },
  { name: 'account key: replaces on an account with no key', status: 409, message: /no key yet, so there is no key k0 to replace.*sessync key status/, request: () => putKey({ keyId: 'k9', check: checkFor('k9'), replaces: 'k0' }) },
  { name: 'account key: a second key without replaces', status: 409, message: /already encrypted under key k1/, request: asCarol(putKey({ keyId: 'k2', check: checkFor('k2') })) },
  { name: 'account key: replaces a key that is not the current one', status: 409, message: /key k0 is not the account's current key \(k1\)/, request: asCarol(putKey({ keyId: 'k2', check: checkFor('k2'), replaces: 'k0' })) },
  { name: 'account key: same id, another check', status: 409, message: /another check than this key of the same id/, request: asCarol(putKey({ keyId: 'k1', check: checkFor('other') })) },
  // Push to an encrypted account: no downgrade.
  { name: 'encrypted account: a jsonl batch', status: 400, message: /end-to-end encrypted, so the server takes no plaintext batches.*sessync key import/, request: asCarol(push((r) => (r.meta = undefined), { path: '/v1/sessions/s1/batches' })) },
  { name: 'encrypted account: plaintext meta with a ciphertext batch', status: 400, message: /takes no plaintext session meta/, request: asCarol(sealedPush((r) => (r.meta = metaFor('e1')))) },
  { name: 'encrypted account: sealed meta under an unknown key', status: 409, message: /under key k7, which is not this account's key \(k1\)/, request: asCarol(sealedPush((r) => (r.meta = sealedMeta('k7')))) },
  { name: 'sealed meta: projectKey not 64 hex', status: 400, message: /meta\.projectKey: sha256/, request: asCarol(sealedPush((r) => (sealedMetaOf(r).projectKey = 'github.com/a/app'))) },
  { name: 'sealed meta: an 8 MB ciphertext (refused, not a stack overflow)', status: 400, message: /meta\.sealed\.ciphertext/, request: asCarol(sealedPush((r) => (sealedMetaOf(r).sealed.ciphertext = 'A'.repeat(8 * 1024 * 1024) + '!'))) },
  { name: 'ciphertext batch shorter than nonce + tag', status: 400, message: /at least the 28 bytes of nonce and tag/, request: asCarol(sealedPush((r) => (r.body = 'A'.repeat(36)) /* 27 bytes */, 'e1', true)) },
  { name: 'sealed meta: wrappedKey not base64', status: 400, message: /meta\.sealed\.wrappedKey/, request: asCarol(sealedPush((r) => (sealedMetaOf(r).sealed.wrappedKey = 'not base64!'))) },
  { name: 'sealed meta: ciphertext over the limit', status: 400, message: /meta\.sealed\.ciphertext/, request: asCarol(sealedPush((r) => (sealedMetaOf(r).sealed.ciphertext = randomBase64(LIMITS.maxSealedMetaChars)))) },
  { name: 'sealed meta: with a plaintext header', status: 400, message: /unrecognized key.*header/i, request: asCarol(sealedPush((r) => ((r.meta as any).header = metaFor('e1').header))) },
  { name: 'sealed meta: keyId with a traversal', status: 400, message: /meta\.sealed\.keyId/, request: asCarol(sealedPush((r) => (sealedMetaOf(r).sealed.keyId = '../k1'))) },
  { name: 'encrypted account: sealed meta onto a session not sealed yet', status: 409, message: /session p1 is still plaintext.*run `sessync key init` again/, request: asCarol(sealedPush(() => undefined, 'p1')) },
  { name: 'plaintext account: sealed meta', status: 400, message: /not end-to-end encrypted, so it takes no sealed session meta; run `sessync key init`/, request: () => sealedPush(() => undefined, 'x1') },
  // PUT /v1/sessions/:session/key.
  { name: 'session key: on a plaintext account', status: 400, message: /not end-to-end encrypted.*sessync key init/, request: () => sessionKey('s1', { keyId: 'k2', wrappedKey: randomBase64(40), replaces: 'k1' }) },
  { name: 'session key: keyId not the account key', status: 409, message: /under key k2, which is not this account's key/, request: asCarol(sessionKey('e1', { keyId: 'k2', wrappedKey: randomBase64(40), replaces: 'k1' })) },
  { name: 'session key: already under k1 with another wrapped key', status: 409, message: /already wrapped under k1, with another wrapped key/, request: asCarol(sessionKey('e1', { keyId: 'k1', wrappedKey: randomBase64(40), replaces: 'k0' })) },
  { name: 'session key: of a plaintext meta', status: 409, message: /meta is still plaintext.*sessync key init/, request: asCarol(sessionKey('p1', { keyId: 'k1', wrappedKey: randomBase64(40), replaces: 'k0' })) },
  { name: 'session key: of a missing session', status: 404, message: /session nope not found/, request: asCarol(sessionKey('nope', { keyId: 'k1', wrappedKey: randomBase64(40), replaces: 'k0' })) },
  { name: 'session key: wrappedKey not base64', status: 400, message: /wrappedKey/, request: asCarol(sessionKey('e1', { keyId: 'k1', wrappedKey: '%%%', replaces: 'k0' })) },
  { name: 'session key: without replaces', status: 400, message: /replaces/, request: asCarol(sessionKey('e1', { keyId: 'k1', wrappedKey: randomBase64(40) })) },
  { name: 'session key: unknown field', status: 400, message: /unrecognized key/i, request: asCarol(sessionKey('e1', { keyId: 'k1', wrappedKey: randomBase64(40), replaces: 'k0', key: 'x' })) },
  // PUT /v1/sessions/:session/batches/:host/:seq/seal.
  { name: 'seal batch: on a plaintext account', status: 400, message: /not end-to-end encrypted, so sealing a batch has nothing to do/, request: () => sealP1(() => undefined, sealPath('s1', 'h', 1)).then((r) => ({ ...r, body: (r.body as string).replaceAll('"p1"', '"s1"') })) },
  { name: 'seal batch: encoding jsonl', status: 400, message: /encoding "aes-256-gcm"/, request: asCarol(sealP1((r) => (r.envelope.encoding = 'jsonl'))) },
  { name: 'seal batch: sha256 of another body', status: 400, message: /sha256 does not match/, request: asCarol(sealP1((r) => (r.body = randomBase64(60)), sealPath('p1', 'h', 1), true)) },
  { name: 'seal batch: body not base64', status: 400, message: /base64/, request: asCarol(sealP1((r) => (r.body = 'not base64!'))) },
  { name: 'seal batch: host of the URL not the envelope', status: 400, message: /the URL host other seq 1/, request: asCarol(sealP1(() => undefined, sealPath('p1', 'other', 1))) },
  { name: 'seal batch: seq in the URL not a number', status: 400, message: /seq "x" in the URL/, request: asCarol(sealP1(() => undefined, sealPath('p1', 'h', 'x'))) },
  { name: 'seal batch: seq 0 in the URL', status: 400, message: /seq "0" in the URL/, request: asCarol(sealP1(() => undefined, sealPath('p1', 'h', 0))) },
  { name: 'seal batch: session of the URL not the envelope', status: 400, message: /does not match the session in the URL/, request: asCarol(sealP1(() => undefined, sealPath('e1', 'h', 1))) },
  { name: 'seal batch: another batchId', status: 409, message: /stored as batch b-h-1 of 3 entries, not other of 3/, request: asCarol(sealP1((r) => (r.envelope.batchId = 'other'))) },
  { name: 'seal batch: another entryCount', status: 409, message: /of 3 entries, not b-h-1 of 4/, request: asCarol(sealP1((r) => (r.envelope.entryCount = 4))) },
  { name: 'seal batch: a missing seq', status: 404, message: /has no batch 9 of host h/, request: asCarol(sealP1((r) => (r.envelope.seq = 9), sealPath('p1', 'h', 9))) },
  { name: 'seal batch: already ciphertext with another body', status: 409, message: /already ciphertext, with another body/, request: asCarol(sealP1((r) => (r.envelope.session = 'e1'), sealPath('e1', 'h', 1))) },
  { name: 'seal batch: path traversal in the host', status: 400, message: /host id/, request: asCarol(sealP1(() => undefined, sealPath('p1', '..%2Fh', 1))) },
  // PUT /v1/sessions/:session/meta/seal.
  { name: 'seal meta: on a plaintext account', status: 400, message: /not end-to-end encrypted, so sealing a session meta/, request: () => sealMeta('s1', sealedMeta('k1')) },
  { name: 'seal meta: already sealed with other content', status: 409, message: /already sealed on this server, with other content/, request: asCarol(sealMeta('e1', sealedMeta('k1'))) },
  { name: 'seal meta: under another key', status: 409, message: /under key k2, which is not this account's key/, request: asCarol(sealMeta('p1', sealedMeta('k2'))) },
  { name: 'seal meta: of a missing session', status: 404, message: /session nope not found/, request: asCarol(sealMeta('nope', sealedMeta('k1'))) },
  { name: 'seal meta: a plaintext meta as body', status: 400, message: /seal session meta: .*projectKey/, request: asCarol(sealMeta('p1', metaFor('p1'))) },
];

export const HOSTILE_CASES: HostileCase[] = [
  // Poison content (issue 9, defects 1 and 2): refused with the limit named, before anything is stored.
  { name: 'entry nested 3,000 levels deep', status: 400, message: /body line 1: the entry nests JSON deeper than 64 levels/, request: () => pushLines(entry({ data: JSON.parse(deepObject(3000)) })) },
  { name: 'entry nested 65 levels (one past the limit)', status: 400, message: /deeper than 64 levels/, request: () => pushLines(JSON.stringify({ ...entryLine('h', 2, 0), x: JSON.parse(deepObject(64)) })) },
  { name: 'entry of nested arrays', status: 400, message: /deeper than 64 levels/, request: () => pushLines(entry({ content: JSON.parse(deepArray(2000)) })) },
  { name: 'deep entry as line 2 of 2', status: 400, message: /body line 2: the entry nests/, request: () => pushLines(entry({}), JSON.stringify({ ...entryLine('h', 2, 1), d: JSON.parse(deepArray(100)) })) },
  { name: 'meta.header nested 3,000 levels deep', status: 400, message: /deeper than 66 levels, at meta\.header.*at most 64/, request: () => header({ x: JSON.parse(deepObject(3000)) }) },
  { name: 'meta.header nested 70 levels', status: 400, message: /at meta\.header/, request: () => header({ x: JSON.parse(deepArray(70)) }) },
  { name: 'meta.header over 2 KiB', status: 413, message: /meta\.header is \d+ bytes as JSON, more than the limit of 2048/, request: () => header({ note: 'n'.repeat(3000) }) },
  { name: 'meta.header that is not a session header', status: 400, message: /meta\.header: first line is not a session header/, request: () => header({ type: 'message' }) },
  { name: 'meta.header without cwd', status: 400, message: /meta\.header: session header without a "cwd" string/, request: () => header({ cwd: 7 }) },
  { name: 'meta.header with a bad version', status: 400, message: /meta\.header: session header "version"/, request: () => header({ version: -1 }) },
  { name: 'meta.header with a __proto__ key', status: 400, message: /"__proto__" is not allowed/, request: () => editText((t) => t.replace('"header":{', '"header":{"__proto__":{"cwd":"/x"},')) },
  { name: '__proto__ at the top of a push', status: 400, message: /"__proto__" is not allowed/, request: () => editText((t) => t.replace(/^\{/, '{"__proto__":{},')) },
  { name: 'deep JSON in an unknown envelope field', status: 400, message: /deeper than 66 levels, at envelope/, request: () => push((r) => ((r.envelope as any).x = JSON.parse(deepArray(100)))) },
  { name: 'meta.projectKey empty', status: 400, message: /meta\.projectKey/, request: () => push((r) => (r.meta!.projectKey = '')) },
  { name: 'meta.projectKey over 1,000 characters', status: 400, message: /meta\.projectKey/, request: () => push((r) => (r.meta!.projectKey = 'p'.repeat(1001))) },
  { name: 'meta.name over 1,000 characters', status: 400, message: /meta\.name/, request: () => push((r) => ((r.meta as SessionMetaInput).name = 'n'.repeat(1001))) },
  { name: 'meta with an unknown field', status: 400, message: /meta/, request: () => push((r) => ((r.meta as any).owner = 'x')) },
  { name: 'meta.header not an object', status: 400, message: /meta\.header/, request: () => push((r) => ((r.meta as any).header = 'session')) },
  // Request shape.
  { name: 'malformed JSON', status: 400, message: /not valid JSON/, request: () => raw('POST', '/v1/sessions/s1/batches', '{"envelope": {') },
  { name: 'empty body', status: 400, message: /body is empty/, request: () => raw('POST', '/v1/sessions/s1/batches', '') },
  { name: 'JSON array body', status: 400, message: /expected object/, request: () => raw('POST', '/v1/sessions/s1/batches', '[1,2]') },
  { name: 'JSON null body', status: 400, message: /expected object/, request: () => raw('POST', '/v1/sessions/s1/batches', 'null') },
  { name: 'body of 3,000 nested arrays', status: 400, message: /deeper than 66 levels/, request: () => raw('POST', '/v1/sessions/s1/batches', deepArray(3000)) },
  { name: 'unknown top-level field', status: 400, message: /unrecognized key/i, request: () => push((r) => (r.extra = 1)) },
  { name: 'invalid UTF-8', status: 400, message: /UTF-8/, request: () => ({ method: 'POST', path: '/v1/sessions/s1/batches', body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }) },
  { name: 'body over 10 MB (Content-Length)', status: 413, message: /larger than/, request: () => raw('POST', '/v1/sessions/s1/batches', 'x'.repeat(LIMITS.maxRequestBytes + 1)) },
  // Envelope.
  { name: 'seq as a string', status: 400, message: /envelope\.seq/, request: () => push((r) => ((r.envelope as any).seq = '2')) },
  { name: 'seq 0', status: 400, message: /envelope\.seq/, request: () => push((r) => (r.envelope.seq = 0)) },
  { name: 'seq negative', status: 400, message: /envelope\.seq/, request: () => push((r) => (r.envelope.seq = -2)) },
  { name: 'seq not an integer', status: 400, message: /envelope\.seq/, request: () => push((r) => (r.envelope.seq = 1.5)) },
  { name: 'seq past the key width', status: 400, message: /envelope\.seq/, request: () => push((r) => (r.envelope.seq = 1e12)) },
  { name: 'entryCount 0', status: 400, message: /envelope\.entryCount/, request: () => push((r) => (r.envelope.entryCount = 0)) },
  { name: 'entryCount over the batch limit', status: 400, message: /envelope\.entryCount/, request: () => push((r) => (r.envelope.entryCount = LIMITS.maxEntriesPerBatch + 1)) },
  { name: 'batchId with a slash', status: 400, message: /envelope\.batchId/, request: () => push((r) => (r.envelope.batchId = 'a/b')) },
  { name: 'sha256 not lowercase hex', status: 400, message: /envelope\.sha256/, request: () => push((r) => (r.envelope.sha256 = 'ABC'), { keepSha: true }) },
  { name: 'sha256 of another body', status: 400, message: /sha256 does not match/, request: () => push((r) => (r.body = r.body.replace('entry 0', 'entry X')), { keepSha: true }) },
  { name: 'entryCount not the line count', status: 400, message: /entryCount is 4 but the body has 3/, request: () => push((r) => (r.envelope.entryCount = 4)) },
  { name: 'unknown encoding', status: 400, message: /envelope\.encoding/, request: () => push((r) => ((r.envelope as any).encoding = 'gzip')) },
  { name: 'ciphertext that is not base64', status: 400, message: /base64/, request: () => push((r) => (r.envelope.encoding = 'aes-256-gcm')) },
  { name: 'unknown envelope field', status: 400, message: /envelope/, request: () => push((r) => ((r.envelope as any).owner = 'me')) },
  { name: 'host with a traversal', status: 400, message: /envelope\.host: host id/, request: () => push((r) => (r.envelope.host = '../h')) },
  { name: 'host id of 129 characters', status: 400, message: /envelope\.host/, request: () => push((r) => (r.envelope.host = 'h'.repeat(129))) },
  { name: 'envelope session with a slash', status: 400, message: /envelope\.session/, request: () => push((r) => (r.envelope.session = 's1/meta')) },
  { name: 'envelope session not the one in the URL', status: 400, message: /does not match the session in the URL/, request: () => push(() => undefined, { path: '/v1/sessions/s2/batches' }) },
  // Entry lines.
  { name: 'empty batch body', status: 400, message: /body is empty/, request: () => push((r) => (r.body = '')) },
  { name: 'blank line between entries', status: 400, message: /line 2 is empty/, request: () => pushLines(entry({}), '', JSON.stringify(entryLine('h', 2, 1))) },
  { name: 'line that is not JSON', status: 400, message: /line 2 is not valid JSON/, request: () => pushLines(entry({}), '{oops') },
  { name: 'line that is an array', status: 400, message: /line 1: not a JSON object/, request: () => pushLines('[1]') },
  { name: 'entry without a type', status: 400, message: /line 1: no "type" string/, request: () => pushLines(JSON.stringify({ id: 'x', parentId: null, timestamp: 't' })) },
  { name: 'entry without an id', status: 400, message: /message entry without an "id" string/, request: () => pushLines(JSON.stringify({ type: 'message', parentId: null, timestamp: 't' })) },
  { name: 'entry with a numeric parentId', status: 400, message: /"parentId" must be an id or null/, request: () => pushLines(entry({ parentId: 5 })) },
  { name: 'entry without a timestamp', status: 400, message: /without a "timestamp" string/, request: () => pushLines(entry({ timestamp: 1 })) },
  { name: 'entry id with a traversal', status: 400, message: /entry id "\.\.\/x" is not valid/, request: () => pushLines(entry({ id: '../x' })) },
  { name: 'entry id of 129 characters', status: 400, message: /entry id .* is not valid/, request: () => pushLines(entry({ id: 'e'.repeat(129) })) },
  { name: 'a second session header', status: 400, message: /a second session header/, request: () => pushLines(JSON.stringify({ type: 'session', id: 'abc', parentId: null, timestamp: 't', cwd: '/' })) },
  { name: 'model_change without provider', status: 400, message: /model_change without "provider"/, request: () => pushLines(JSON.stringify({ type: 'model_change', id: 'm1', parentId: null, timestamp: 't' })) },
  { name: 'entry over 4 MiB', status: 413, message: /entry is larger than/, request: () => pushLines(entry({ data: 'y'.repeat(LIMITS.maxEntryBytes) })) },
  // Paths and names.
  { name: 'session path with %2F traversal', status: 400, message: /session id "\.\.\/\.\.\/tokens" is not valid/, request: () => push(() => undefined, { path: '/v1/sessions/..%2F..%2Ftokens/batches' }) },
  { name: 'session path with dots', status: 400, message: /session id "s\.\.1" is not valid/, request: () => pull('{"cursor":{}}', 's..1') },
  { name: 'session path with a NUL', status: 400, message: /session id "s1\\u0000" is not valid/, request: () => pull('{"cursor":{}}', 's1%00') },
  { name: 'session path with a newline', status: 400, message: /session id "s\\nx" is not valid/, request: () => raw('GET', '/v1/sessions/s%0Ax') },
  { name: 'session id of 129 characters', status: 400, message: /session id .* is not valid/, request: () => raw('GET', `/v1/sessions/${'s'.repeat(129)}`) },
  { name: 'session id named __proto__', status: 400, message: /session id "__proto__" is not valid/, request: () => raw('GET', '/v1/sessions/__proto__') },
  // Auth.
  { name: 'push without a token', status: 401, message: /missing bearer token/, request: async () => ({ ...(await push(() => undefined)), auth: 'none' }) },
  { name: 'push with an unknown token', status: 401, message: /token not recognised/, request: async () => ({ ...(await push(() => undefined)), auth: { header: 'Bearer sst_not-a-real-token' } }) },
  { name: 'Basic instead of Bearer', status: 401, message: /must be "Bearer <token>"/, request: () => ({ method: 'GET', path: '/v1/whoami', auth: { header: 'Basic YTpi' } }) },
  { name: 'bearer value of 600 characters', status: 401, message: /token not recognised/, request: () => ({ method: 'GET', path: '/v1/whoami', auth: { header: `Bearer ${'t'.repeat(600)}` } }) },
  // Conflicts.
  { name: 'a different batch at a taken seq', status: 409, message: /different batch at seq 1/, request: async () => ({ method: 'POST', path: '/v1/sessions/s1/batches', body: JSON.stringify(await makeBatch({ session: 's1', host: 'h', seq: 1, count: 2, batchId: 'again' })) }) },
  { name: 'seq gap', status: 409, message: /seq gap: host h has no batch 4/, request: async () => ({ method: 'POST', path: '/v1/sessions/s1/batches', body: JSON.stringify(await makeBatch({ session: 's1', host: 'h', seq: 5 })) }) },
  { name: 'seq gap on a new host', status: 409, message: /has no batch 1/, request: async () => ({ method: 'POST', path: '/v1/sessions/s1/batches', body: JSON.stringify(await makeBatch({ session: 's1', host: 'other', seq: 2 })) }) },
  // Pull.
  { name: 'cursor negative', status: 400, message: /cursor\.h/, request: () => pull('{"cursor":{"h":-1}}') },
  { name: 'cursor not an integer', status: 400, message: /cursor\.h/, request: () => pull('{"cursor":{"h":1.5}}') },
  { name: 'cursor past the safe integers', status: 400, message: /cursor\.h/, request: () => pull('{"cursor":{"h":1e300}}') },
  { name: 'cursor host with a traversal', status: 400, message: /cursor/, request: () => pull('{"cursor":{"../x":1}}') },
  { name: 'cursor not an object', status: 400, message: /cursor/, request: () => pull('{"cursor":"h:1"}') },
  { name: 'cursor with a __proto__ key', status: 400, message: /"__proto__" is not allowed/, request: () => pull('{"cursor":{"__proto__":{"h":1}}}') },
  { name: 'cursor of 10,001 hosts', status: 400, message: /at most 10000 hosts/, request: () => pull(JSON.stringify({ cursor: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`h${i}`, 1])) })) },
  { name: 'pull body nested 100 levels', status: 400, message: /deeper than 66 levels, at cursor/, request: () => pull(`{"cursor":${deepObject(100)}}`) },
  { name: 'pull with an unknown field', status: 400, message: /unrecognized key/i, request: () => pull('{"cursor":{},"all":true}') },
  { name: 'pull body over 1 MiB', status: 413, message: /larger than/, request: () => pull(`{"cursor":{},"x":"${'x'.repeat(1024 * 1024)}"}`) },
  { name: 'pull of a missing session', status: 404, message: /session nope not found/, request: () => pull('{"cursor":{}}', 'nope') },
  { name: "pull of another account's session", status: 404, message: /session s1 not found/, request: () => pull('{"cursor":{}}', 's1', 'bob') },
  { name: "meta of another account's session", status: 404, message: /session s1 not found/, request: () => raw('GET', '/v1/sessions/s1', undefined, 'bob') },
  { name: 'changes page token with a traversal', status: 400, message: /page token/, request: () => raw('GET', '/v1/changes?page=..%2F..%2Ftokens') },
  { name: 'changes page token of another shape', status: 400, message: /page token/, request: () => raw('GET', '/v1/changes?page=s1/h/1') },
  // Shares.
  { name: 'share with empty ciphertext', status: 400, message: /ciphertext/, request: () => share({ ciphertext: '' }) },
  { name: 'share expiring in the past', status: 400, message: /is in the past/, request: () => share({ expiresAt: '2020-01-01T00:00:00.000Z' }) },
  { name: 'share living over 366 days', status: 400, message: /at most 366 days/, request: () => share({ expiresAt: new Date(Date.now() + 400 * 24 * 3600 * 1000).toISOString() }) },
  { name: 'share expiresAt not a date', status: 400, message: /expiresAt/, request: () => share({ expiresAt: 'tomorrow' }) },
  { name: 'share with an unknown field', status: 400, message: /unrecognized key/i, request: () => share({ key: 'k' }) },
  { name: 'share entryId with a traversal', status: 400, message: /entryId/, request: () => share({ entryId: '../e' }) },
  { name: 'share session with a slash', status: 400, message: /session/, request: () => share({ session: 'a/b' }) },
  { name: 'share entryCount negative', status: 400, message: /entryCount/, request: () => share({ entryCount: -1 }) },
  { name: 'share with a __proto__ key', status: 400, message: /"__proto__" is not allowed/, request: () => raw('POST', '/v1/shares', `{"__proto__":{},"ciphertext":"AAAA","expiresAt":"${FUTURE()}"}`) },
  { name: 'share without a token', status: 401, message: /missing bearer token/, request: () => ({ ...share({}), auth: 'none' }) },
  { name: 'blob of an unknown token', status: 404, message: /share link does not exist/, request: () => raw('GET', `/v1/shares/${'A'.repeat(43)}/blob`, undefined, 'none') },
  { name: 'blob of a malformed token', status: 404, message: /share link does not exist/, request: () => raw('GET', '/v1/shares/..%2Fx/blob', undefined, 'none') },
  { name: 'blob of a revoked share', status: 410, message: /revoked by its owner/, request: (c) => raw('GET', `/v1/shares/${c.revokedShareToken}/blob`, undefined, 'none') },
  { name: 'share page of an unknown token', status: 404, message: /./, page: true, request: () => raw('GET', `/s/${'B'.repeat(43)}`, undefined, 'none') },
  { name: 'share page of a malformed token', status: 404, message: /./, page: true, request: () => raw('GET', '/s/not-a-token', undefined, 'none') },
  { name: 'share page of a revoked share', status: 410, message: /./, page: true, request: (c) => raw('GET', `/s/${c.revokedShareToken}`, undefined, 'none') },
  { name: 'revoke of an unknown share', status: 404, message: /no share of yours/, request: () => raw('DELETE', '/v1/shares/0000000000000000') },
  { name: "revoke of another account's share", status: 404, message: /no share of yours/, request: (c) => raw('DELETE', `/v1/shares/${c.liveShareId}`, undefined, 'bob') },
  { name: 'share list page that is not a share id', status: 400, message: /page is not a page token/, request: () => raw('GET', '/v1/shares?page=..%2F..') },
  // Admin.
  { name: 'wrong admin secret', status: 401, message: /admin secret does not match/, request: () => raw('POST', '/v1/admin/accounts', '{}', { header: 'Bearer not-the-secret' }) },
  { name: 'user token on an admin route', status: 401, message: /admin secret does not match/, request: () => raw('POST', '/v1/admin/accounts', '{}') },
  { name: 'admin call without a secret', status: 401, message: /missing admin secret/, request: () => raw('POST', '/v1/admin/accounts', '{}', 'none') },
  { name: 'admin: unknown field', status: 400, message: /create account/, request: () => admin('/v1/admin/accounts', '{"name":"x","admin":true}') },
  { name: 'admin: account name over 200 characters', status: 400, message: /name/, request: () => admin('/v1/admin/accounts', JSON.stringify({ name: 'n'.repeat(201) })) },
  { name: 'admin: body nested 100 levels', status: 400, message: /deeper than 66 levels/, request: () => admin('/v1/admin/accounts', `{"name":${deepArray(100)}}`) },
  { name: 'admin: token for a missing account', status: 404, message: /account acct-missing not found/, request: () => admin('/v1/admin/accounts/acct-missing/tokens') },
  { name: 'admin: account with a traversal', status: 400, message: /account id/, request: () => admin('/v1/admin/accounts/..%2Ftokens/tokens') },
  // Own tokens (list, new, revoke).
  { name: 'token list without a token', status: 401, message: /missing bearer token/, request: () => raw('GET', '/v1/tokens', undefined, 'none') },
  { name: 'token list with a revoked token', status: 401, message: /was revoked at/, request: (c) => raw('GET', '/v1/tokens', undefined, { header: `Bearer ${c.revokedToken}` }) },
  { name: 'new token with an empty name', status: 400, message: /create token.*name/, request: () => newToken('{"name":""}') },
  { name: 'new token name over 100 characters', status: 400, message: /create token.*name/, request: () => newToken(JSON.stringify({ name: 'n'.repeat(101) })) },
  { name: 'new token with an unknown field', status: 400, message: /unrecognized key/i, request: () => newToken('{"name":"x","account":"other"}') },
  { name: 'new token with a __proto__ key', status: 400, message: /"__proto__" is not allowed/, request: () => newToken('{"__proto__":{"name":"x"}}') },
  { name: 'new token body nested 100 levels', status: 400, message: /deeper than 66 levels/, request: () => newToken(`{"name":${deepObject(100)}}`) },
  { name: 'new token body over 1 MiB', status: 413, message: /larger than/, request: () => newToken(JSON.stringify({ name: 'n'.repeat(1024 * 1024) })) },
  { name: 'new token body not JSON', status: 400, message: /not valid JSON/, request: () => newToken('{"name":') },
  { name: 'new token without a token', status: 401, message: /missing bearer token/, request: () => newToken('{}', 'none') },
  { name: 'revoke of an unknown token id', status: 404, message: /no token of this account has id/, request: () => raw('DELETE', '/v1/tokens/tok_00000000000000000000') },
  { name: 'revoke of a token id named __proto__', status: 404, message: /no token of this account has id "__proto__"/, request: () => raw('DELETE', '/v1/tokens/__proto__') },
  { name: 'revoke of a token id with a traversal', status: 404, message: /no token of this account has id/, request: () => raw('DELETE', '/v1/tokens/..%2F..%2Faccounts') },
  { name: "revoke of another account's token", status: 404, message: /no token of this account has id/, request: (c) => raw('DELETE', `/v1/tokens/${c.aliceTokenId}`, undefined, 'bob') },
  // Admin token routes.
  { name: 'admin: token list of a missing account', status: 404, message: /account acct-missing not found/, request: () => raw('GET', '/v1/admin/accounts/acct-missing/tokens', undefined, 'admin') },
  { name: 'admin: token list of account __proto__', status: 400, message: /account id "__proto__" is not valid/, request: () => raw('GET', '/v1/admin/accounts/__proto__/tokens', undefined, 'admin') },
  { name: 'admin: token list with a user token', status: 401, message: /admin secret does not match/, request: (c) => raw('GET', `/v1/admin/accounts/${c.aliceAccount}/tokens`) },
  { name: 'admin: token name over 100 characters', status: 400, message: /create token.*name/, request: (c) => admin(`/v1/admin/accounts/${c.aliceAccount}/tokens`, JSON.stringify({ name: 'n'.repeat(101) })) },
  { name: 'admin: token body with a __proto__ key', status: 400, message: /"__proto__" is not allowed/, request: (c) => admin(`/v1/admin/accounts/${c.aliceAccount}/tokens`, '{"__proto__":{}}') },
  { name: 'admin: revoke of an unknown token', status: 404, message: /has no token "tok_none"/, request: (c) => raw('DELETE', `/v1/admin/accounts/${c.aliceAccount}/tokens/tok_none`, undefined, 'admin') },
  { name: "admin: revoke of a token under another account", status: 404, message: /has no token/, request: (c) => raw('DELETE', `/v1/admin/accounts/${c.bobAccount}/tokens/${c.aliceTokenId}`, undefined, 'admin') },
  { name: 'admin: revoke with an account traversal', status: 400, message: /account id/, request: (c) => raw('DELETE', `/v1/admin/accounts/..%2F${c.aliceAccount}/tokens/${c.aliceTokenId}`, undefined, 'admin') },
  // Quotas.
  { name: 'quota maxBytes negative', status: 400, message: /set quota.*maxBytes/, request: quota('{"maxBytes":-1}') },
  { name: 'quota maxBytes not an integer', status: 400, message: /set quota.*maxBytes/, request: quota('{"maxBytes":1.5}') },
  { name: 'quota maxBytes past the safe integers', status: 400, message: /set quota.*maxBytes/, request: quota('{"maxBytes":1e300}') },
  { name: 'quota maxSessions as a string', status: 400, message: /set quota.*maxSessions/, request: quota('{"maxSessions":"10"}') },
  { name: 'quota with an unknown field', status: 400, message: /unrecognized key/i, request: quota('{"maxBytes":10,"maxFiles":3}') },
  { name: 'quota with a __proto__ key', status: 400, message: /"__proto__" is not allowed/, request: quota('{"__proto__":{"maxBytes":1}}') },
  { name: 'quota body empty', status: 400, message: /body is empty/, request: quota('') },
  { name: 'quota body nested 100 levels', status: 400, message: /deeper than 66 levels/, request: quota(`{"maxBytes":${deepArray(100)}}`) },
  { name: 'quota of a missing account', status: 404, message: /account acct-missing not found/, request: quota('{"maxBytes":10}', () => 'acct-missing') },
  { name: 'quota set with a user token', status: 401, message: /admin secret does not match/, request: (c) => raw('PUT', `/v1/admin/accounts/${c.aliceAccount}/quota`, '{"maxBytes":10}') },
  { name: 'quota read of account __proto__', status: 400, message: /account id "__proto__" is not valid/, request: () => raw('GET', '/v1/admin/accounts/__proto__/quota', undefined, 'admin') },
  // Session delete and undelete.
  { name: "delete of another account's session", status: 404, message: /session s1 not found/, request: () => delSession('s1', '{"host":"h"}', 'bob') },
  { name: 'delete of a missing session', status: 404, message: /session nope not found/, request: () => delSession('nope', '{"host":"h"}') },
  { name: 'delete without a body', status: 400, message: /body is empty/, request: () => delSession('s1') },
  { name: 'delete with a host traversal', status: 400, message: /host/, request: () => delSession('s1', '{"host":"../h"}') },
  { name: 'delete with an unknown field', status: 400, message: /unrecognized key/i, request: () => delSession('s1', '{"host":"h","force":true}') },
  { name: 'delete of session __proto__', status: 400, message: /session id "__proto__" is not valid/, request: () => delSession('__proto__', '{"host":"h"}') },
  { name: 'delete without a token', status: 401, message: /missing bearer token/, request: () => delSession('s1', '{"host":"h"}', 'none') },
  { name: 'undelete of a session id with dots', status: 400, message: /session id "s\.\.1" is not valid/, request: () => raw('POST', '/v1/sessions/s..1/undelete') },
  ...ENCRYPTION_CASES,
  // Routing.
  { name: 'unknown route', status: 404, message: /no route GET \/v1\/nope/, request: () => raw('GET', '/v1/nope') },
  { name: 'wrong method on a route', status: 404, message: /no route GET/, request: () => raw('GET', '/v1/sessions/s1/batches') },
  { name: 'slash inside a session path', status: 404, message: /no route POST/, request: () => pull('{"cursor":{}}', 'a/b') },
];

/** The Request a case sends to `base`. */
export async function hostileRequest(c: HostileCase, ctx: HostileContext, base: string): Promise<Request> {
  const r = await c.request(ctx);
  const headers: Record<string, string> = {};
  const auth = r.auth ?? 'alice';
  if (typeof auth === 'object') headers.authorization = auth.header;
  else if (auth !== 'none') headers.authorization = `Bearer ${auth === 'alice' ? ctx.alice : auth === 'bob' ? ctx.bob : auth === 'carol' ? ctx.carol : ctx.adminSecret}`;
  if (r.body !== undefined) headers['content-type'] = 'application/json';
  return new Request(base + r.path, { method: r.method, headers, ...(r.body === undefined ? {} : { body: r.body as BodyInit }) });
}

/** The state every case starts from, made through the API itself. */
export async function setUpHostile(fetcher: { fetch(req: Request): Promise<Response> | Response }, base: string, adminSecret: string): Promise<HostileContext> {
  const call = async (method: string, path: string, bearer: string, body?: unknown) => {
    const res = await fetcher.fetch(new Request(base + path, { method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json;
  };
  const a = await call('POST', '/v1/admin/accounts', adminSecret, { name: 'alice' });
  const b = await call('POST', '/v1/admin/accounts', adminSecret, { name: 'bob' });
  await call('POST', '/v1/sessions/s1/batches', a.token, await makeBatch({ session: 's1', host: 'h', seq: 1, meta: metaFor('s1') }));
  const live = await call('POST', '/v1/shares', a.token, { ciphertext: 'AAAA', expiresAt: FUTURE() });
  const revoked = await call('POST', '/v1/shares', a.token, { ciphertext: 'BBBB', expiresAt: FUTURE() });
  await call('DELETE', `/v1/shares/${revoked.id}`, a.token);
  const second = await call('POST', '/v1/tokens', a.token, { name: 'second' });
  const gone = await call('POST', '/v1/tokens', a.token, { name: 'gone' });
  await call('DELETE', `/v1/tokens/${gone.id}`, a.token);
  const carol = await call('POST', '/v1/admin/accounts', adminSecret, { name: 'carol' });
  await call('POST', '/v1/sessions/p1/batches', carol.token, await makeBatch({ session: 'p1', host: 'h', seq: 1, meta: metaFor('p1') }));
  await call('PUT', '/v1/account/key', carol.token, { keyId: 'k1', check: checkFor('k1') });
  await call('POST', '/v1/sessions/e1/batches', carol.token, await makeSealedBatch({ session: 'e1', host: 'h', seq: 1, meta: sealedMeta('k1') }));
  return {
    carol: carol.token,
    alice: a.token, bob: b.token, adminSecret, aliceAccount: a.account, liveShareId: live.id, revokedShareToken: revoked.token,
    bobAccount: b.account, aliceTokenId: second.id, revokedToken: gone.token,
  };
}

/** Asserts the answer a case must get: its status, and its clear message (or the share page) with retryable false. */
export async function expectHostileAnswer(c: HostileCase, res: Response): Promise<void> {
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(c.status);
  if (c.page) {
    expect(text).toMatch(/^<!doctype html>/);
    return;
  }
  const body = ErrorBodySchema.parse(JSON.parse(text));
  expect(body.error.message).toMatch(c.message);
  expect(body.error.retryable).toBe(false);
}
