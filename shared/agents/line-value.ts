// The value of one agent line as a JSON object, or null: for the questions asked of a line by its text alone.

/** The line's value when it is a JSON object; null for anything else (the file's reader reports a line that is not JSON). */
export function lineObject(text: string): Record<string, unknown> | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null; // not JSON: nothing to answer from, and nothing is lost (the line itself stays where it is)
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
