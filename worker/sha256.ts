// SHA-256 as lowercase hex: WebCrypto everywhere (workerd, browsers), Node's own hash where the runtime has one.
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

export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  if (nodeCreateHash) return nodeCreateHash('sha256').update(data).digest('hex');
  const bytes = typeof data === 'string' ? encoder.encode(data) : data;
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
