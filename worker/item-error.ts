// One item's failure in a multi-session request (POST /v1/batches, POST /v1/pulls): what the single route would answer.
import { isSessyncError } from '../shared/errors.js';

export interface ItemError {
  ok: false;
  error: { code: string; message: string; retryable: boolean; details?: unknown };
}

/** What a client learns of one item's failure: as the single route would answer it (server faults without their details). */
export function itemError(e: unknown, where: string): ItemError {
  if (isSessyncError(e) && e.status < 500) return { ok: false, error: e.toJSON() };
  console.error(`sessync: ${where}:`, isSessyncError(e) ? e.message : e);
  const code = isSessyncError(e) ? e.code : 'internal';
  const message = code === 'unavailable' ? 'the server cannot reach its storage right now; retry later (the server log has details)' : 'internal server error; the server log has details';
  return { ok: false, error: { code, message, retryable: isSessyncError(e) ? e.retryable : true } };
}

