// Depth checks for JSON that never recurse: a count and at most one scan of the text, or one walk of a parsed value with its own stack.

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
 * Reports the first `{` or `[` of `text` that opens level `limit + 1` (the outermost object or array is level 1); null
 * when the text stays within the limit. Brackets inside strings are skipped (escapes included). The text need not be
 * valid JSON: the check only bounds what a parse or a later recursive walk of the value could face, so run it before
 * either. It runs on every line a push, pull or open reads: a text with no more than `limit` opening brackets at all
 * (in strings or not) cannot pass the limit, and counting them is a native search per bracket, so most lines end
 * there; only the others are scanned character by character.
 */
export function findTooDeepText(text: string, limit: number): TooDeep | null {
  return moreOpenersThan(text, limit) ? scanDepth(text, limit) : null;
}

function moreOpenersThan(text: string, limit: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) if (++n > limit) return true;
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1)) if (++n > limit) return true;
  return false;
}

/** What an open level is, for the path: an array, an object before its first key, or where the last key's text lies (any number above these). */
const ARRAY = -10;
const NO_KEY = -11;

/** One scan of `text` for findTooDeepText. */
function scanDepth(text: string, limit: number): TooDeep | null {
  let depth = 0;
  let inString = false;
  let strStart = -1;
  let strEnd = -1;
  // Each of the first PATH_LEVELS open levels: ARRAY, NO_KEY, or where its last key starts and ends (made text only on a find).
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
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
      if (depth >= 1 && depth <= PATH_LEVELS && strEnd >= strStart) {
        keyStart[depth - 1] = strStart;
        keyEnd[depth - 1] = strEnd;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return { limit, offset: i, path: pathOf(text, keyStart, keyEnd, Math.min(depth - 1, PATH_LEVELS)) };
      if (depth <= PATH_LEVELS) keyStart[depth - 1] = c === 0x5b ? ARRAY : NO_KEY;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return null;
}

function pathOf(text: string, keyStart: readonly number[], keyEnd: readonly number[], levels: number): string[] {
  const path: string[] = [];
  for (let k = 0; k < levels; k++) {
    const at = keyStart[k]!;
    path.push(at === ARRAY ? '[]' : at === NO_KEY ? '' : text.slice(at, Math.min(keyEnd[k]!, at + 40)));
  }
  return path;
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
