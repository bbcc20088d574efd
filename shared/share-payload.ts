// What a share encrypts: the session header and one branch (root to the chosen entry), plus where it came from.
import type { SessionEntry, SessionHeader } from './entry.js';
import { SessyncError } from './errors.js';
import { toJsonText } from './json-stringify.js';

export const SHARE_PAYLOAD_VERSION = 1;

export interface ShareSource {
  /** The shared session's id on the sharing machine. */
  session: string;
  /** The last entry of the shared branch (null for a session with no entries). */
  entryId: string | null;
  entryCount: number;
}

export interface SharePayload {
  version: typeof SHARE_PAYLOAD_VERSION;
  header: SessionHeader;
  /** Root first, the chosen entry last: exactly one branch, nothing after the chosen entry. */
  entries: SessionEntry[];
  source: ShareSource;
  createdAt: string;
}

const encoder = new TextEncoder();

export function buildSharePayload(header: SessionHeader, branch: SessionEntry[], createdAt = new Date().toISOString()): SharePayload {
  const last = branch[branch.length - 1];
  return {
    version: SHARE_PAYLOAD_VERSION,
    header,
    entries: branch,
    source: { session: header.id, entryId: last ? last.id : null, entryCount: branch.length },
    createdAt,
  };
}

export function encodeSharePayload(payload: SharePayload): Uint8Array {
  return encoder.encode(toJsonText(payload));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Structural check of a decrypted payload, without zod so the viewer's script stays small.
 * Returns null when usable, else the first reason it is not.
 */
export function checkSharePayload(v: unknown): string | null {
  if (!isObject(v)) return 'not a JSON object';
  if (v.version !== SHARE_PAYLOAD_VERSION) return `payload version ${String(v.version)} is not ${SHARE_PAYLOAD_VERSION}: update sessync`;
  const h = v.header;
  if (!isObject(h) || h.type !== 'session' || typeof h.id !== 'string') return 'no session header';
  if (!Array.isArray(v.entries)) return 'no entries list';
  const ids = new Set<string>();
  for (let i = 0; i < v.entries.length; i++) {
    const e: unknown = v.entries[i];
    if (!isObject(e) || typeof e.type !== 'string' || typeof e.id !== 'string') return `entry ${i + 1} has no type or id`;
    // One branch: every entry's parent is the entry before it (the first may name a parent outside the share).
    const before = i > 0 ? (v.entries[i - 1] as Record<string, unknown>).id : undefined;
    if (i > 0 && e.parentId !== before) return `entry ${i + 1} (${e.id}) does not continue the branch`;
    if (ids.has(e.id)) return `entry id ${e.id} appears twice`;
    ids.add(e.id);
  }
  const s = v.source;
  if (!isObject(s) || typeof s.session !== 'string') return 'no source';
  if (typeof v.createdAt !== 'string') return 'no createdAt';
  return null;
}

/** Parses decrypted bytes into a payload; anything else is SessyncError('corrupt'). */
export function decodeSharePayload(bytes: Uint8Array): SharePayload {
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw new SessyncError('corrupt', `the share decrypted but is not valid JSON: ${(e as Error).message}`);
  }
  const problem = checkSharePayload(v);
  if (problem) throw new SessyncError('corrupt', `the share is not a sessync share payload: ${problem}`);
  return v as SharePayload;
}
