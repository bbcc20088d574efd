// JSON.stringify without recursion: entry content can be nested far deeper than the call stack allows.

export interface StringifyOptions {
  /** Object keys in sorted order (canonical form: same content, same text, whatever the key order). */
  sortKeys?: boolean;
  /** Spaces per level, as JSON.stringify's third argument (0 or absent = compact). */
  indent?: number;
  /**
   * Levels that get newlines and indentation; deeper levels are written compact. Indentation of a value
   * nested n deep costs n² characters, so a display of untrusted content sets a bound. Default: all.
   */
  indentLevels?: number;
}

interface Frame {
  value: object;
  /** null for an array. */
  keys: string[] | null;
  next: number;
  /** Items written so far (an object's skipped keys do not count). */
  written: number;
}

/** undefined, functions and symbols: dropped from objects, null in arrays, as JSON.stringify does. */
function isSkipped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/**
 * The same text as JSON.stringify(value, null, indent) for JSON data (what JSON.parse returns), at any depth,
 * with an explicit stack instead of recursion. `toJSON` methods are not called. A cycle throws a TypeError,
 * as JSON.stringify does; undefined at the top gives undefined.
 */
export function jsonStringify(value: unknown, opts: StringifyOptions = {}): string | undefined {
  if (isSkipped(value)) return undefined;
  const indent = Math.max(0, Math.min(10, Math.floor(opts.indent ?? 0)));
  const levels = indent > 0 ? (opts.indentLevels ?? Infinity) : 0;
  const out: string[] = [];
  const stack: Frame[] = [];
  const onPath = new Set<object>();
  const pads: string[] = [''];
  const pad = (depth: number): string => (pads[depth] ??= ' '.repeat(depth * indent));

  /** Writes a scalar, or opens a frame for an array or object (written by the loop). */
  const begin = (v: unknown): void => {
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v) ?? 'null');
      return;
    }
    if (onPath.has(v)) throw new TypeError('Converting circular structure to JSON');
    onPath.add(v);
    if (Array.isArray(v)) {
      out.push('[');
      stack.push({ value: v, keys: null, next: 0, written: 0 });
    } else {
      out.push('{');
      const keys = Object.keys(v);
      stack.push({ value: v, keys: opts.sortKeys ? keys.sort() : keys, next: 0, written: 0 });
    }
  };

  begin(value);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    const depth = stack.length;
    const pretty = depth <= levels;
    let item: unknown;
    let key: string | null = null;
    let found = false;
    if (f.keys === null) {
      const arr = f.value as unknown[];
      if (f.next < arr.length) {
        item = arr[f.next++];
        if (isSkipped(item)) item = null;
        found = true;
      }
    } else {
      const obj = f.value as Record<string, unknown>;
      while (f.next < f.keys.length) {
        const k = f.keys[f.next++]!;
        const x = obj[k];
        if (isSkipped(x)) continue;
        key = k;
        item = x;
        found = true;
        break;
      }
    }
    if (!found) {
      stack.pop();
      onPath.delete(f.value);
      if (pretty && f.written > 0) out.push('\n', pad(depth - 1));
      out.push(f.keys === null ? ']' : '}');
      continue;
    }
    if (f.written++ > 0) out.push(',');
    if (pretty) out.push('\n', pad(depth));
    if (key !== null) out.push(JSON.stringify(key), pretty ? ': ' : ':');
    begin(item);
  }
  return out.join('');
}

/**
 * JSON.stringify's text at any depth: the native writer first (fast, and all but every value fits its
 * stack), the iterative one when the stack runs out. Keys keep their order.
 */
export function toJsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return jsonStringify(value) ?? 'null';
  }
}
