// Object keys as file names: which keys a file store can hold, and the one name each key segment (or run of segments) gets.
import { SessyncError } from '../../shared/errors.js';

const MAX_KEY_BYTES = 1024;
/** Most file systems cap one name at 255 bytes. */
export const MAX_NAME_BYTES = 255;
/** Appended to every file's name, so a key `a/b` (a file) and keys `a/b/...` (a directory) can coexist. */
export const FILE_MARK = '~';
const utf8 = new TextEncoder();
/** A segment (or joined tail) of lowercase letters, digits, '_', '-', '/' and non-leading '.': encoded as itself, '/' as %2f. */
const PLAIN_SEGMENT = /^[a-z0-9_-][a-z0-9_./-]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Throws bad_input for a key that no backend should hold: nothing here can climb out of the root. */
export function validateKey(key: string): void {
  const bad = (why: string) => new SessyncError('bad_input', `object key "${key.slice(0, 80)}" ${why}`);
  if (typeof key !== 'string' || key.length === 0) throw bad('is empty');
  if (LONE_SURROGATE.test(key)) throw bad('is not valid Unicode');
  if (utf8.encode(key).length > MAX_KEY_BYTES) throw bad(`is longer than ${MAX_KEY_BYTES} bytes`);
  if (/[\u0000-\u001f\u007f]/.test(key)) throw bad('contains a control character');
  for (const seg of key.split('/')) {
    if (seg === '') throw bad('has an empty path segment (leading, trailing or double /)');
    if (seg === '.' || seg === '..') throw bad('has a . or .. path segment');
    if (encodeSegment(seg).length + FILE_MARK.length > MAX_NAME_BYTES) throw bad(`has a segment too long for a file name`);
  }
}

/**
 * One key segment as a file name that means the same on every file system: lowercase letters,
 * digits, '_', '-' and non-leading '.' stay; every other byte becomes %xx (lowercase hex).
 * Uppercase letters are written in lowercase and remembered in a trailing '@' + hex bitmask,
 * so `Foo` and `foo` stay two files where names are case-insensitive (macOS, Windows) and the
 * names stay short (a 128-letter name needs 161 bytes). The output never starts with '.',
 * never contains '~', and only in the mask contains '@'.
 */
export function encodeSegment(seg: string): string {
  // Most segments (ids, names, a file name's joined tail) keep every character but '/': no walk per character.
  if (PLAIN_SEGMENT.test(seg)) return seg.includes('/') ? seg.replaceAll('/', '%2f') : seg;
  let out = '';
  const upper: number[] = [];
  for (const ch of seg) {
    if (/^[a-z0-9_-]$/.test(ch) || (ch === '.' && out !== '')) out += ch;
    else if (/^[A-Z]$/.test(ch)) {
      upper.push(out.length);
      out += ch.toLowerCase();
    } else for (const b of utf8.encode(ch)) out += '%' + b.toString(16).padStart(2, '0');
  }
  if (upper.length === 0) return out;
  const mask = new Uint8Array(Math.ceil(out.length / 4));
  for (const i of upper) mask[i >> 2]! |= 1 << (i & 3);
  return out + '@' + Array.from(mask, (n) => n.toString(16)).join('');
}

/**
 * The segment a file or directory name stands for, or null when it is not one encodeSegment makes. A file's name may
 * stand for several segments joined by '/' (the end of a key below the layout's last directory level: fs-layout.ts).
 */
export function decodeEntryName(name: string): { segment: string; isDir: boolean } | null {
  const isDir = !name.endsWith(FILE_MARK);
  const enc = isDir ? name : name.slice(0, -FILE_MARK.length);
  const at = enc.indexOf('@');
  const body = at < 0 ? enc : enc.slice(0, at);
  if (!/^(?:[a-z0-9_.-]|%[0-9a-f]{2})+$/.test(body)) return null;
  const chars = body.split('');
  if (at >= 0) {
    const mask = enc.slice(at + 1);
    if (!/^[0-9a-f]+$/.test(mask)) return null;
    for (let i = 0; i < chars.length; i++) {
      if ((parseInt(mask[i >> 2] ?? '0', 16) >> (i & 3)) & 1) chars[i] = chars[i]!.toUpperCase();
    }
  }
  let segment: string;
  try {
    segment = decodeURIComponent(chars.join(''));
  } catch {
    return null; // not UTF-8 underneath: not a name this store wrote
  }
  // Only the canonical spelling counts, so one key never has two files.
  return encodeSegment(segment) === enc ? { segment, isDir } : null;
}
