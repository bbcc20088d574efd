// Short ids for humans: the first 8 characters of an id's distinctive part.
import { isUuidV7 } from '../../shared/ids.js';

/**
 * UUIDv7 ids begin with their creation time, so ids made within a minute share their first 8 characters;
 * their random tail is the distinctive part. Other ids (pi's 8-hex ids, migrated ids) are random from the start.
 */
export function shortId(id: string): string {
  if (isUuidV7(id)) return id.slice(-8).toLowerCase();
  return id.slice(0, 8);
}

/** Does `ref` name this id: a prefix of the full id or of its short form (case-insensitive)? */
export function idMatches(id: string, ref: string): boolean {
  const r = ref.toLowerCase();
  const lower = id.toLowerCase();
  return lower.startsWith(r) || shortId(lower).startsWith(r);
}
