// Entry and session ids: UUIDv7 for everything new, deterministic UUID-shaped ids for migrations, legacy ids accepted.
import { v7 } from 'uuid';

const UUID_V7_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const LEGACY_RE = /^[0-9a-f]{8}$/i;

/** A new time-ordered id (UUIDv7). Ids made in one process sort in creation order. */
export function newId(): string {
  return v7();
}

export function isUuidV7(id: string): boolean {
  return UUID_V7_RE.test(id);
}

/** pi's short entry ids (8 hex characters, unique only within one file). */
export function isLegacyId(id: string): boolean {
  return LEGACY_RE.test(id);
}

/**
 * A UUID-shaped id (RFC 9562 version 8, "custom") taken from SHA-256(seed). Migration uses it so
 * that two machines migrating the same old file give every entry the same id: sync is a union by
 * id, and random ids would duplicate the whole history.
 */
export async function deterministicId(seed: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(seed)));
  const b = digest.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80; // version 8
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  let hex = '';
  for (const byte of b) hex += byte.toString(16).padStart(2, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
