// One JSON record the server itself wrote (token, share, index): read whole, or null when absent.
import type { BlobStore } from './blob-store.js';
import { SessyncError } from '../../shared/errors.js';

const decoder = new TextDecoder();

/** The record at `key`, or null when there is none. A record that does not parse is a server fault, named by `what`. */
export async function readJsonRecord<T>(store: BlobStore, key: string, what: string): Promise<T | null> {
  const obj = await store.get(key);
  if (!obj) return null;
  try {
    return JSON.parse(decoder.decode(obj.body)) as T;
  } catch (e) {
    throw new SessyncError('internal', `${what} at ${key} is unreadable: ${(e as Error).message}`);
  }
}
