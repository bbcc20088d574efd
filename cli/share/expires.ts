// `--expires 7d` and friends: a duration in minutes, hours, days or weeks, turned into an ISO time.
import { SessyncError } from '../../shared/errors.js';

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
/** The server refuses more; failing here gives the better message. */
export const MAX_EXPIRES_MS = 366 * 86_400_000;
export const DEFAULT_EXPIRES = '7d';

export function parseExpires(text: string, now = Date.now()): string {
  const m = /^\s*(\d{1,6})\s*([mhdw])\s*$/i.exec(text);
  if (!m) throw new SessyncError('bad_input', `--expires "${text}" is not a duration: use e.g. 30m, 12h, 7d or 2w`);
  const ms = Number(m[1]) * UNIT_MS[m[2]!.toLowerCase()]!;
  if (ms <= 0) throw new SessyncError('bad_input', '--expires must be longer than zero');
  if (ms > MAX_EXPIRES_MS) throw new SessyncError('bad_input', `--expires ${text} is longer than the 366 days a share may live`);
  return new Date(now + ms).toISOString();
}
