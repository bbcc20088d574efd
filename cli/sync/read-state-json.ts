// Reads one sync-state JSON file: null when it is not there, a clear error when it is not JSON.
import { SessyncError } from '../../shared/errors.js';
import { readTextIfExists } from '../store/atomic-json.js';

/** The parsed file, or null when it does not exist. */
export async function readStateJson<T>(path: string): Promise<T | null> {
  const text = await readTextIfExists(path);
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new SessyncError('corrupt', `sync state ${path} is not valid JSON; move it away to rebuild it (the next sync re-sends what the server lacks, without duplicates)`);
  }
}
