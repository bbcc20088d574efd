// The file store's errors: a failed system call as a SessyncError that says whether retrying can help.
import { SessyncError } from '../../shared/errors.js';

export function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}

export function unavailable(op: string, key: string, e: unknown): SessyncError {
  const code = errno(e);
  // Out of space, quota, read-only file system and permissions need an operator; EMFILE/EAGAIN/EBUSY pass.
  const retryable = !['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'ENOTSUP', 'EXDEV'].includes(code ?? '');
  return new SessyncError('unavailable', `file store: ${op} ${key} failed: ${(e as Error).message}`, { retryable, cause: e });
}
