// Depth checks for JSON that never recurse: one scan of the text, or one walk of a parsed value with its own stack.

/** Where a JSON text first nests deeper than allowed. */
export interface TooDeep {
  /** The limit that was passed. */
  limit: number;
  /** UTF-16 offset of the bracket that went one level past the limit. */
  offset: number;
  /** Keys (as written, escapes kept) and `[]` for arrays of the first PATH_LEVELS containers around it. */
  path: string[];
}

/** Levels of the path a scan keeps for messages; deeper levels are not named. */
const PATH_LEVELS = 8;

/**
 * Scans `text` once and reports the first `{` or `[` that opens level `limit + 1` (the outermost
 * object or array is level 1); null when the text stays within the limit. Brackets inside strings
 * are skipped (escapes included). The text need not be valid JSON: the scan only bounds what a
 * parse or a later recursive walk of the value could face, so run it before either.
 */
export function findTooDeepText(text: string, limit: number): TooDeep | null {
  let depth = 0;
  let inString = false;
  let strStart = -1;
  let strEnd = -1;
  // What each open level is ('[]' or the key last seen in it), for the first PATH_LEVELS levels.
  const path: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // Straight to the string's closing quote (native search: most of a session's text is inside strings). A quote
      // after an odd run of backslashes is escaped; whatever follows a backslash is part of the string.
      let q = text.indexOf('"', i);
      while (q >= 0) {
        let b = q - 1;
        while (b >= i && text.charCodeAt(b) === 0x5c) b--;
        if ((q - 1 - b) % 2 === 0) break;
        q = text.indexOf('"', q + 1);
      }
      if (q < 0) return null; // an unterminated string: nothing after it opens a level
      inString = false;
      strEnd = q;
      i = q;
    } else if (c === 0x22) {
      inString = true;
      strStart = i + 1;
    } else if (c === 0x3a /* : */) {
      if (depth >= 1 && depth <= PATH_LEVELS && strEnd >= strStart) path[depth - 1] = text.slice(strStart, Math.min(strEnd, strStart + 40));
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return { limit, offset: i, path: path.slice(0, Math.min(depth - 1, PATH_LEVELS)) };
      if (depth <= PATH_LEVELS) path[depth - 1] = c === 0x5b ? '[]' : '';
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return null;
}

/** A scan's path as `meta.header.a[]`, with `...` when the find lies deeper than the path reaches. */
export function formatTooDeep(found: TooDeep): string {
  const named = found.path.map((k, i) => (k === '[]' ? '[]' : i === 0 ? k : `.${k}`)).join('');
  return found.limit > found.path.length ? `${named}...` : named;
}

/**
 * The path (keys and indexes) to the first object or array of `value` at level `limit + 1`, or
 * null when `value` nests at most `limit` levels (a scalar is level 0, `value` itself level 1).
 * Walks with an explicit stack, so any depth is safe; stops at the first find.
 */
export function findTooDeepValue(value: unknown, limit: number): (string | number)[] | null {
  if (typeof value !== 'object' || value === null) return null;
  // Each frame: the container, its level, and the path that leads to it (shared prefixes are cheap: paths are rebuilt only on a find).
  const stack: { v: object; level: number; parent: number; key: string | number }[] = [{ v: value, level: 1, parent: -1, key: '' }];
  const frames: { parent: number; key: string | number }[] = [];
  while (stack.length > 0) {
    const top = stack.pop()!;
    const me = frames.push({ parent: top.parent, key: top.key }) - 1;
    if (top.level > limit) {
      const path: (string | number)[] = [];
      for (let f = me; f > 0; f = frames[f]!.parent) path.push(frames[f]!.key);
      return path.reverse();
    }
    const children: [string | number, unknown][] = Array.isArray(top.v) ? top.v.map((x, i) => [i, x]) : Object.entries(top.v);
    for (let i = children.length - 1; i >= 0; i--) {
      const [k, child] = children[i]!;
      if (typeof child === 'object' && child !== null) stack.push({ v: child, level: top.level + 1, parent: me, key: k });
    }
  }
  return null;
}
