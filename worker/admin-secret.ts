// The admin secret's minimum: long and random-looking, so it cannot be guessed; one rule for every runtime.

export const MIN_ADMIN_SECRET_CHARS = 32;
const HOW_TO_MAKE = 'make one with `openssl rand -base64 32`';

/** Why `secret` is too weak to guard the admin API, or null when it will do. */
export function adminSecretProblem(secret: string): string | null {
  const s = secret.trim();
  if (s.length < MIN_ADMIN_SECRET_CHARS) return `SESSYNC_ADMIN_SECRET has ${s.length} characters; it needs at least ${MIN_ADMIN_SECRET_CHARS} random ones: ${HOW_TO_MAKE}`;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  // Base64 or hex of 16+ random bytes passes these (all but never); repeats and one-character fillers do not.
  const periodic = (s + s).indexOf(s, 1) < s.length;
  const mostCommon = Math.max(...counts.values());
  if (counts.size < 8 || periodic || mostCommon > s.length / 2) {
    return `SESSYNC_ADMIN_SECRET does not look random (too few different characters, or a repeated pattern): ${HOW_TO_MAKE}`;
  }
  return null;
}
