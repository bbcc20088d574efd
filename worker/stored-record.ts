// A record the server wrote itself (token, quota, share, account key) read and checked: a damaged one is a logged, non-retryable `corrupt`, never a 500.
import type { z } from 'zod';
import type { BlobStore } from './store/blob-store.js';
import { SessyncError } from '../shared/errors.js';

const decoder = new TextDecoder();

/**
 * The record at `key` checked against `schema`, or null when there is none. A record that is not JSON or not of the
 * schema (a disk fault, a hand edit, a cut write of an older server) is the account's problem, not a server fault: a
 * retry cannot mend it, so it is a 422 `corrupt` saying `advice` (what repairs it), as damaged batches and metas are.
 * The key goes to the log only (the admin needs it to repair the record; the client does not).
 */
export async function readStoredRecord<T>(store: BlobStore, key: string, schema: z.ZodType<T>, what: string, advice: string): Promise<T | null> {
  const obj = await store.get(key);
  return obj ? parseStoredRecord(obj.body, key, schema, what, advice) : null;
}

/** The bytes of the record at `key` checked as readStoredRecord does, for a caller that keeps the bytes (to salvage them). */
export function parseStoredRecord<T>(body: Uint8Array, key: string, schema: z.ZodType<T>, what: string, advice: string): T {
  const damaged = (why: string): SessyncError => {
    // Not "answered 422": a caller may work round the damage (and logs what it did instead).
    console.error(`sessync: the ${what} at ${key} is damaged (${why})`);
    return new SessyncError('corrupt', `the ${what} stored on this server is damaged (${why}); ${advice}`, { retryable: false });
  };
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch (e) {
    throw damaged(`not JSON: ${(e as Error).message.slice(0, 120)}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw damaged(`not a ${what}`);
  return parsed.data;
}
