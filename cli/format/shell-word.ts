// A word for a POSIX shell, for commands sessync prints for the user to paste.

/** The word as it is when a shell reads it so; else in single quotes (a quote inside written as '\''). */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
