// SHA-256 as lowercase hex: WebCrypto everywhere (workerd, browsers), Node's own hash where the runtime has one.
import { concatChunks } from '../shared/batch-frames.js';

const encoder = new TextEncoder();

type NodeHash = { update(data: Uint8Array | string): NodeHash; digest(enc: 'hex'): string };
/**
 * Node's createHash, reached without a static node:* import (this module also runs in workerd). On Node, WebCrypto's
 * digest copies its input and hashes on another thread: for a 1 MB batch that is twice the CPU of the plain hash.
 */
const nodeCreateHash = (() => {
  const get = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule;
  if (typeof get !== 'function' || typeof navigator === 'object' && navigator.userAgent === 'Cloudflare-Workers') return null;
  const mod = get('node:crypto') as { createHash?: (alg: string) => NodeHash } | undefined;
  return typeof mod?.createHash === 'function' ? mod.createHash : null;
})();

/** The hex digest of a string (as UTF-8), bytes, or bytes in parts (as a body arrived: hashed part by part, never joined for Node's hash). */
export async function sha256Hex(data: string | Uint8Array | readonly Uint8Array[]): Promise<string> {
  if (nodeCreateHash) {
    if (typeof data === 'string' || !Array.isArray(data)) return nodeCreateHash('sha256').update(data as string | Uint8Array).digest('hex');
    const h = nodeCreateHash('sha256');
    for (const p of data) h.update(p);
    return h.digest('hex');
  }
  const bytes = typeof data === 'string' ? encoder.encode(data) : !Array.isArray(data) ? (data as Uint8Array) : data.length === 1 ? data[0]! : concatChunks(data as Uint8Array[]); // WebCrypto digests one buffer (workerd's body is one chunk)
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  let out = '';
  for (const b of digest) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Compares two secrets in time that does not depend on where they differ (both are hashed first, so lengths leak nothing). */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(a)),
    crypto.subtle.digest('SHA-256', encoder.encode(b)),
  ]);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
