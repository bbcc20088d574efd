// End-to-end encryption of sync: the account key, its export string, HKDF sub-keys, session data keys, sealed batches and meta (WebCrypto only).
import { SessyncError } from './errors.js';
import { toBase64Url } from './share-crypto.js';

/**
 * Everything here is WebCrypto (Node 20, browsers, workerd alike); no primitive is written by hand.
 * - The account key is 256 random bits. It never leaves the client except as its export string.
 * - Sub-keys come from HKDF-SHA-256 over it (empty salt: the input is uniformly random already), one per `info`:
 *   "sessync/check" (HMAC key of the server-side key check), "sessync/wrap" (AES-KW key wrapping session keys),
 *   "sessync/project" (HMAC key of project keys). One key never serves two purposes.
 * - Each session has its own 256-bit AES-GCM data key, derived by HKDF from the account key with info
 *   "sessync/session/<session id>" and wrapped with AES-KW (RFC 3394, its own integrity check) for the meta. Both
 *   steps are deterministic, so two machines that make the same session id make the same key and the same wrapped
 *   key (the server sees no mismatch), and a machine that crashed before its first batch derives it again. The meta's
 *   wrapped key stays the truth: sessions made by older clients hold a random key, and after a rotation a session
 *   keeps its key (re-wrapped); only sessions made since derive from the current account key.
 * - Batch bodies and the meta are AES-256-GCM with a fresh 96-bit random nonce, stored as nonce ‖ ciphertext ‖ tag (raw,
 *   or base64 in JSON); the associated data binds what the server must not be able to move (see batchAad, metaAad).
 *   A resend after a crash re-makes a batch's very bytes with the nonce it drew (resealBatchBytes): the same message
 *   again, never another one under that nonce.
 */
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID_BYTES = 8;
const EXPORT_PREFIX = 'sessync-key-1';
const CHECKSUM_CHARS = 8;
const CHECK_LABEL = 'sessync key check v1';
const EMPTY = new Uint8Array(0);
const utf8 = new TextEncoder();

export const KEY_ID_RE = /^[0-9a-f]{16}$/;
const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

function buf(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes as Uint8Array<ArrayBuffer>;
}

/** Bytes per btoa call: a multiple of 3 (so the parts join without padding inside), under the engine's argument limit. */
const B64_CHUNK = 0x6000 * 3;

function fromBinaryString(bin: string): Uint8Array {
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Standard base64 in plain web APIs, a chunk at a time (one giant binary string is several times slower). Node callers
 * with megabytes to encode use Buffer instead: see sealBatchBytes.
 */
export function toBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let i = 0; i < bytes.length; i += B64_CHUNK) parts.push(btoa(String.fromCharCode.apply(null, bytes.subarray(i, i + B64_CHUNK) as unknown as number[])));
  return parts.join('');
}

/** Standard base64 (what the wire stores); anything else is `corrupt`, named by `what`. */
export function fromBase64(text: string, what = 'data'): Uint8Array {
  if (text.length % 4 !== 0 || !B64_RE.test(text)) throw new SessyncError('corrupt', `${what} is not valid base64`);
  return fromBinaryString(atob(text));
}

function fromBase64Url(text: string): Uint8Array | null {
  if (!B64URL_RE.test(text) || text.length % 4 === 1) return null;
  const bytes = fromBinaryString(atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4)));
  // Only the canonical spelling: atob ignores a last character's unused bits, so a typo there would still import.
  return toBase64Url(bytes) === text ? bytes : null;
}

function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** The account key as this module holds it: raw bytes (for export and storage) and its id. */
export interface AccountKey {
  keyId: string;
  raw: Uint8Array;
}

/** A fresh account key: 256 random bits and a 64-bit random id (16 hex digits, a NAME_RE). */
export function newAccountKey(): AccountKey {
  return { keyId: hex(crypto.getRandomValues(new Uint8Array(KEY_ID_BYTES))), raw: crypto.getRandomValues(new Uint8Array(KEY_BYTES)) };
}

async function checksum(keyId: string, raw: Uint8Array): Promise<string> {
  const data = new Uint8Array([...utf8.encode(`${EXPORT_PREFIX}.${keyId}.`), ...raw]);
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', data))).slice(0, CHECKSUM_CHARS);
}

/** `sessync-key-1.<keyId>.<key, base64url>.<checksum>`: versioned, and a typo in any part fails the checksum. */
export async function exportAccountKey(key: AccountKey): Promise<string> {
  return `${EXPORT_PREFIX}.${key.keyId}.${toBase64Url(key.raw)}.${await checksum(key.keyId, key.raw)}`;
}

/** Parses an export string (whitespace around and inside it, from a wrapped terminal line, is ignored). */
export async function importAccountKey(text: string): Promise<AccountKey> {
  const s = text.replace(/\s+/g, '');
  const parts = s.split('.');
  if (parts[0] !== EXPORT_PREFIX) {
    if (/^sessync-key-\d+$/.test(parts[0] ?? '')) throw new SessyncError('unsupported_version', `this key was exported by a newer sessync (${parts[0]}); update sessync to import it`);
    throw new SessyncError('bad_input', 'this is not a sessync key export string (it starts with "sessync-key-1."); copy it whole from `sessync key export` on a machine that has the key');
  }
  const [, keyId = '', keyText = '', sum = '', ...rest] = parts;
  const raw = fromBase64Url(keyText);
  if (rest.length > 0 || !KEY_ID_RE.test(keyId) || raw === null || raw.length !== KEY_BYTES || sum.length !== CHECKSUM_CHARS) {
    throw new SessyncError('bad_input', 'the key export string is truncated or malformed; copy it whole from `sessync key export` on a machine that has the key');
  }
  if ((await checksum(keyId, raw)) !== sum) {
    throw new SessyncError('bad_input', 'the key export string has a typo (its checksum does not match); copy it again from `sessync key export` on a machine that has the key');
  }
  return { keyId, raw };
}

/** The account key's sub-keys, derived once per process and key. */
export interface DerivedKeys {
  keyId: string;
  /** The account key as HKDF input, for the per-session data keys. */
  base: CryptoKey;
  check: CryptoKey;
  wrap: CryptoKey;
  project: CryptoKey;
}

export async function deriveKeys(key: AccountKey): Promise<DerivedKeys> {
  if (key.raw.length !== KEY_BYTES) throw new SessyncError('bad_input', 'an account key is 32 bytes');
  const base = await crypto.subtle.importKey('raw', buf(key.raw), 'HKDF', false, ['deriveKey']);
  const hkdf = (info: string) => ({ name: 'HKDF', hash: 'SHA-256', salt: EMPTY, info: utf8.encode(info) });
  const hmac = { name: 'HMAC', hash: 'SHA-256', length: 256 };
  const [check, wrap, project] = await Promise.all([
    crypto.subtle.deriveKey(hkdf('sessync/check'), base, hmac, false, ['sign']),
    crypto.subtle.deriveKey(hkdf('sessync/wrap'), base, { name: 'AES-KW', length: 256 }, false, ['wrapKey', 'unwrapKey']),
    crypto.subtle.deriveKey(hkdf('sessync/project'), base, hmac, false, ['sign']),
  ]);
  return { keyId: key.keyId, base, check, wrap, project };
}

/** The key check the server keeps: base64url of HMAC-SHA-256("sessync key check v1") under the check sub-key. */
export async function keyCheck(keys: DerivedKeys): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.sign('HMAC', keys.check, utf8.encode(CHECK_LABEL))));
}

/** The project key as the server sees it: 64 lowercase hex of HMAC-SHA-256 of the plaintext key. */
export async function sealProjectKey(keys: DerivedKeys, projectKey: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.sign('HMAC', keys.project, utf8.encode(projectKey))));
}

/** A session's data key. Extractable only so that a rotation can wrap it again under the next account key. */
export interface SessionKey {
  key: CryptoKey;
  /** base64 of the key wrapped under the account key `keyId` (what the meta stores). */
  wrappedKey: string;
  keyId: string;
}

async function wrapped(key: CryptoKey, keys: DerivedKeys): Promise<SessionKey> {
  return { key, wrappedKey: toBase64(new Uint8Array(await crypto.subtle.wrapKey('raw', key, keys.wrap, 'AES-KW'))), keyId: keys.keyId };
}

/** The data key of a session made now: HKDF of the account key for this session id, the same on every machine. */
export async function deriveSessionKey(keys: DerivedKeys, session: string): Promise<SessionKey> {
  const info = { name: 'HKDF', hash: 'SHA-256', salt: EMPTY, info: utf8.encode(`sessync/session/${session}`) };
  return wrapped(await crypto.subtle.deriveKey(info, keys.base, { name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']), keys);
}

/** A random data key, as older clients made one per session (their metas still hold them; tests make such sessions). */
export async function newSessionKey(keys: DerivedKeys): Promise<SessionKey> {
  return wrapped(await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']), keys);
}

/** Unwraps a stored session key; a key wrapped under another account key, or altered, is `corrupt`. */
export async function unwrapSessionKey(keys: DerivedKeys, wrappedKey: string, keyId: string, session: string): Promise<SessionKey> {
  if (keyId !== keys.keyId) {
    throw new SessyncError('forbidden', `session ${session} is encrypted under account key ${keyId}, not this machine's ${keys.keyId}: import the current key with \`sessync key import\` (from \`sessync key export\` on a machine that has it)`);
  }
  try {
    const key = await crypto.subtle.unwrapKey('raw', buf(fromBase64(wrappedKey, 'wrapped key')), keys.wrap, 'AES-KW', { name: 'AES-GCM', length: 256 }, true, ['encrypt', 'decrypt']);
    return { key, wrappedKey, keyId };
  } catch (e) {
    throw new SessyncError('corrupt', `session ${session}: its data key does not unwrap under account key ${keys.keyId} (altered, or wrapped under another key)`, { cause: e });
  }
}

/** The same session key wrapped under another account key (rotation): batches stay as they are. */
export async function rewrapSessionKey(sessionKey: SessionKey, next: DerivedKeys): Promise<SessionKey> {
  const wrapped = new Uint8Array(await crypto.subtle.wrapKey('raw', sessionKey.key, next.wrap, 'AES-KW'));
  return { key: sessionKey.key, wrappedKey: toBase64(wrapped), keyId: next.keyId };
}

/** What a sealed batch is bound to: the server can neither move it to another session, host or seq, nor relabel it. */
export interface BatchBinding {
  account: string;
  session: string;
  host: string;
  seq: number;
  batchId: string;
  entryCount: number;
}

export function batchAad(b: BatchBinding): Uint8Array {
  return utf8.encode(`sessync batch v1\n${b.account}\n${b.session}\n${b.host}\n${b.seq}\n${b.batchId}\n${b.entryCount}`);
}

export function metaAad(account: string, session: string): Uint8Array {
  return utf8.encode(`sessync meta v1\n${account}\n${session}\nmeta`);
}

/** nonce ‖ ciphertext ‖ tag; the nonce fresh and random unless given (resealBatchBytes). */
async function sealBytes(key: CryptoKey, plaintext: Uint8Array, aad: Uint8Array, given?: Uint8Array): Promise<Uint8Array> {
  const nonce = given ?? crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: buf(nonce), additionalData: buf(aad) }, key, buf(plaintext)));
  const out = new Uint8Array(NONCE_BYTES + ct.length);
  out.set(nonce, 0);
  out.set(ct, NONCE_BYTES);
  return out;
}

async function seal(key: CryptoKey, plaintext: Uint8Array, aad: Uint8Array): Promise<string> {
  return toBase64(await sealBytes(key, plaintext, aad));
}

/** Opens what seal made, or null when it does not authenticate (altered, moved, or another key). */
async function open(key: CryptoKey, sealed: string, aad: Uint8Array, what: string): Promise<Uint8Array | null> {
  return openBytes(key, fromBase64(sealed, what), aad);
}

async function openBytes(key: CryptoKey, bytes: Uint8Array, aad: Uint8Array): Promise<Uint8Array | null> {
  if (bytes.length < NONCE_BYTES + TAG_BYTES) return null;
  try {
    return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: buf(bytes.subarray(0, NONCE_BYTES)), additionalData: buf(aad) }, key, buf(bytes.subarray(NONCE_BYTES))));
  } catch {
    return null; // AES-GCM says only "does not authenticate"; the caller names the batch and reports it
  }
}

/** A batch body (JSONL text) sealed for the wire: base64 of nonce ‖ ciphertext ‖ tag. */
export function sealBatch(sessionKey: SessionKey, binding: BatchBinding, body: string): Promise<string> {
  return seal(sessionKey.key, utf8.encode(body), batchAad(binding));
}

/**
 * A batch body sealed as bytes (nonce ‖ ciphertext ‖ tag): for callers with a faster base64 of their own. `body` is
 * the JSONL text, or its UTF-8 bytes as they are (a file's own bytes: no string is made of them to be encoded again).
 */
export function sealBatchBytes(sessionKey: SessionKey, binding: BatchBinding, body: string | Uint8Array): Promise<Uint8Array> {
  return sealBytes(sessionKey.key, typeof body === 'string' ? utf8.encode(body) : body, batchAad(binding));
}

/**
 * The very bytes sealBatchBytes made of this same body under this key and binding, given the nonce it drew (the first
 * 12 bytes of its output): a resend after a crash re-makes them instead of storing them. AES-GCM is deterministic in
 * (key, nonce, associated data, plaintext), so the same message sealed again reveals nothing new; the caller must have
 * checked that the body is the one first sealed (a nonce with another body under one key would break GCM).
 */
export function resealBatchBytes(sessionKey: SessionKey, binding: BatchBinding, body: Uint8Array, nonce: Uint8Array): Promise<Uint8Array> {
  if (nonce.length !== NONCE_BYTES) throw new SessyncError('corrupt', `a batch nonce is ${NONCE_BYTES} bytes`);
  return sealBytes(sessionKey.key, body, batchAad(binding), nonce);
}

/** The JSONL text of a sealed batch, or null when it fails authentication (tampered, spliced, replayed, wrong key). */
export async function openBatch(sessionKey: SessionKey, binding: BatchBinding, sealed: string): Promise<string | null> {
  return openBatchBytes(sessionKey, binding, fromBase64(sealed, `batch ${binding.seq} of host ${binding.host}`));
}

/** The opened batch's JSONL as UTF-8 bytes (not decoded: a pull writes them as they are), or null as openBatch. */
export function openBatchPlain(sessionKey: SessionKey, binding: BatchBinding, sealed: Uint8Array): Promise<Uint8Array | null> {
  return openBytes(sessionKey.key, sealed, batchAad(binding));
}

/** openBatch on the decoded bytes. */
export async function openBatchBytes(sessionKey: SessionKey, binding: BatchBinding, sealed: Uint8Array): Promise<string | null> {
  const bytes = await openBatchPlain(sessionKey, binding, sealed);
  if (bytes === null) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null; // authenticated bytes that are not UTF-8 were never written by sessync
  }
}

/** What the sealed meta holds: what a plaintext meta shows the server, and the project key the server sees only as an HMAC. */
export interface MetaPlaintext {
  header: Record<string, unknown>;
  name?: string;
  agent?: string;
  projectKey?: string;
}

export function sealMeta(sessionKey: SessionKey, account: string, session: string, meta: MetaPlaintext): Promise<string> {
  return seal(sessionKey.key, utf8.encode(JSON.stringify(meta)), metaAad(account, session));
}

export async function openMeta(sessionKey: SessionKey, account: string, session: string, sealed: string): Promise<MetaPlaintext> {
  const bytes = await open(sessionKey.key, sealed, metaAad(account, session), `the meta of session ${session}`);
  const fail = () => new SessyncError('corrupt', `session ${session}: its sealed meta fails authentication (altered on the server, or sealed under another key)`);
  if (bytes === null) throw fail();
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw fail();
  }
  const o = v as Partial<MetaPlaintext> | null;
  if (!o || typeof o !== 'object' || !o.header || typeof o.header !== 'object' || Array.isArray(o.header)) throw fail();
  return {
    header: o.header,
    ...(typeof o.name === 'string' ? { name: o.name } : {}),
    ...(typeof o.agent === 'string' ? { agent: o.agent } : {}),
    ...(typeof o.projectKey === 'string' ? { projectKey: o.projectKey } : {}),
  };
}
