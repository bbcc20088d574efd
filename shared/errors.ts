// One error type for every layer: a stable code, a message a user can act on, and whether a retry can help.

export type ErrorCode =
  // input and local state
  | 'bad_input'
  | 'not_found'
  | 'ambiguous'
  | 'conflict'
  | 'locked'
  | 'corrupt'
  | 'unsupported_version'
  // wire and service
  | 'unauthorized'
  | 'forbidden'
  | 'too_large'
  | 'gone'
  | 'unavailable'
  | 'wrong_server'
  | 'internal'
  // end-to-end encryption
  | 'key_mismatch'
  | 'encryption_required'
  | 'not_encrypted'
  // the local file system (cli/fs-error.ts): what the user must fix on their machine
  | 'fs_permission'
  | 'fs_readonly'
  | 'fs_full'
  | 'fs_limit'
  | 'fs_busy'
  | 'fs_io'
  | 'fs_bad_path'
  | 'fs_error'
  // the user stopped a run (Ctrl-C, SIGTERM): what was done is saved, the same command finishes it
  | 'interrupted';

/** HTTP status that each code answers with when it crosses the wire. */
export const statusOf: Record<ErrorCode, number> = {
  bad_input: 400,
  not_found: 404,
  ambiguous: 409,
  conflict: 409,
  locked: 423,
  corrupt: 422,
  unsupported_version: 422,
  unauthorized: 401,
  forbidden: 403,
  too_large: 413,
  gone: 410,
  unavailable: 503,
  wrong_server: 502,
  internal: 500,
  key_mismatch: 409,
  encryption_required: 400,
  not_encrypted: 400,
  // Local codes: a server whose own disk fails answers 5xx (507 when full), never blaming the request.
  fs_permission: 500,
  fs_readonly: 500,
  fs_full: 507,
  fs_limit: 503,
  fs_busy: 503,
  fs_io: 500,
  fs_bad_path: 500,
  fs_error: 500,
  // Local only (a client's run stopped by a signal); a server never answers with it.
  interrupted: 500,
};

export class SessyncError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, opts: { retryable?: boolean; details?: unknown; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SessyncError';
    this.code = code;
    this.retryable = opts.retryable ?? (code === 'unavailable' || code === 'locked');
    this.details = opts.details;
  }

  get status(): number {
    return statusOf[this.code];
  }

  toJSON(): { code: ErrorCode; message: string; retryable: boolean; details?: unknown } {
    return this.details === undefined
      ? { code: this.code, message: this.message, retryable: this.retryable }
      : { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

export function isSessyncError(e: unknown, code?: ErrorCode): e is SessyncError {
  return e instanceof SessyncError && (code === undefined || e.code === code);
}
