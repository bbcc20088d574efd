// A one-pass check of an entry line's UTF-8 bytes that answers "certainly a valid entry" without building its value.
import { LIMITS } from './wire.js';

/**
 * Where the last line scanEntryLine accepted keeps its id, parentId and type: byte offsets into the bytes it was given
 * (`parentStart` -1 for a null parent; the type has no escape, so its bytes are its text). One shared record, so a
 * line costs no allocation; read it before the next scan.
 */
export const scanned = { idStart: 0, idEnd: 0, parentStart: -1, parentEnd: -1, typeStart: 0, typeEnd: 0 };

/** Per byte inside a string: 0 for a plain ASCII char, 1 for '"', 2 for '\\', 3 for a control char, 4 for a non-ASCII lead. */
const STR = (() => {
  const t = new Uint8Array(256);
  for (let c = 0; c < 0x20; c++) t[c] = 3;
  t[0x22] = 1;
  t[0x5c] = 2;
  for (let c = 0x80; c < 0x100; c++) t[c] = 4;
  return t;
})();

/** 1 for the bytes an entry id may hold after its first (ENTRY_ID_RE: letters, digits, _ . : -), 2 for letters and digits. */
const ID = (() => {
  const t = new Uint8Array(256);
  for (const c of '_.:-') t[c.charCodeAt(0)] = 1;
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') t[c.charCodeAt(0)] = 2;
  return t;
})();

/** The top-level keys checkEntry reads (and `role`, read inside `message`); any other key is only checked as JSON. */
const K_TYPE = 1;
const K_ID = 2;
const K_PARENT = 3;
const K_TIMESTAMP = 4;
const K_MESSAGE = 5;
const K_PROVIDER = 6;
const K_MODEL_ID = 7;
const K_THINKING = 8;
const K_SUMMARY = 9;
const K_FIRST_KEPT = 10;
const K_CUSTOM_TYPE = 11;
const K_CONTENT = 12;
const K_TARGET = 13;
const KEY_COUNT = 14;
const KEY_NAMES: readonly string[] = ['', 'type', 'id', 'parentId', 'timestamp', 'message', 'provider', 'modelId', 'thinkingLevel', 'summary', 'firstKeptEntryId', 'customType', 'content', 'targetId'];
const KEY_BYTES = KEY_NAMES.map((k) => Uint8Array.from(k, (c) => c.charCodeAt(0)));

/** What a value is, as checkEntry tells them apart (0: the key is absent). */
const V_STRING = 1;
const V_OBJECT = 2;
const V_ARRAY = 3;
const V_OTHER = 4; // number, true, false
const V_NULL = 5;

/** Entry types whose known fields checkEntry checks; any other type passes on the fields every entry has. */
const TYPE_NAMES = ['session', 'message', 'model_change', 'thinking_level_change', 'compaction', 'branch_summary', 'custom', 'custom_message', 'label'] as const;
const TYPE_BYTES = TYPE_NAMES.map((k) => Uint8Array.from(k, (c) => c.charCodeAt(0)));

// Per scan: each key of interest's value kind and (for strings) where its bytes lie, between the quotes.
const kind = new Uint8Array(KEY_COUNT);
const vStart = new Int32Array(KEY_COUNT);
const vEnd = new Int32Array(KEY_COUNT);
/** Whether each string of interest held a backslash or a non-ASCII byte (then its text is not its bytes). */
const vPlain = new Uint8Array(KEY_COUNT);
let roleKind = 0;
let roleSeen = false;
/** Open containers: 1 object, 2 array. */
const stack = new Uint8Array(LIMITS.maxJsonDepth + 2);

/** Set by scanString: whether the string held an escape or a non-ASCII byte. */
let stringPlain = true;

/**
 * Whether bytes [start, end) of `b` (one line, no '\n') are certainly an entry every check of a push accepts: one JSON
 * object, valid UTF-8, nested at most `depthLimit` levels, that checkEntry accepts, with an id ENTRY_ID_RE accepts
 * (and, to keep it a plain byte compare, a parentId with no escape). false means "not certain", never "bad": the
 * caller then runs the full check (JSON.parse and checkEntry), which also words what is wrong. A line this accepts,
 * the full check accepts as well, with the same id and parentId (test/shared/entry-line-scan.test.ts holds it to that
 * against random lines). Builds nothing: no string, no value, so the bytes of a large push cost no garbage.
 */
export function scanEntryLine(b: Uint8Array, start: number, end: number, depthLimit: number = LIMITS.maxJsonDepth): boolean {
  return scanEntry(b, start, end, depthLimit) === end;
}

/**
 * scanEntryLine on the line that starts at `start` and ends at the first '\n' (or at `end`): the index of that '\n'
 * (or `end`) when the line is certainly an entry, else -1. Finds the line's end in the same pass (no search for the
 * newline first).
 */
export function scanEntry(b: Uint8Array, start: number, end: number, depthLimit: number = LIMITS.maxJsonDepth): number {
  if (depthLimit > LIMITS.maxJsonDepth) return -1;
  for (let k = 1; k < KEY_COUNT; k++) kind[k] = 0;
  roleKind = 0;
  roleSeen = false;
  let i = skipWs(b, start, end);
  if (i >= end || b[i] !== 0x7b) return -1;
  let depth = 0;
  /** Key of interest whose value is next (0: none), and whether we are inside the top-level `message` object. */
  let key = 0;
  let inMessage = false;
  let messageDepth = -1;
  // The grammar, as a loop over three states: a value is expected, a key (or the end of an empty object), or what
  // follows a value (',' or a closer).
  let state = 0; // 0 value, 1 key, 2 after value
  for (;;) {
    if (state === 0) {
      i = skipWs(b, i, end);
      if (i >= end) return -1;
      const c = b[i]!;
      if (c === 0x7b || c === 0x5b) {
        if (depth === depthLimit) return -1;
        stack[++depth] = c === 0x7b ? 1 : 2;
        if (depth === 2) {
          if (key !== 0) record(key, c === 0x7b ? V_OBJECT : V_ARRAY, 0, 0, true);
          if (key === K_MESSAGE && c === 0x7b) {
            inMessage = true;
            messageDepth = depth;
          }
        }
        key = 0;
        i = skipWs(b, i + 1, end);
        if (i >= end) return -1;
        if (c === 0x7b) {
          if (b[i] === 0x7d) {
            i++;
            depth--;
            if (inMessage && depth < messageDepth) inMessage = false;
            state = 2;
          } else state = 1;
        } else if (b[i] === 0x5d) {
          i++;
          depth--;
          state = 2;
        } // else a value comes: state stays 0
        continue;
      }
      if (c === 0x22) {
        const from = i + 1;
        i = scanString(b, from, end);
        if (i < 0) return -1;
        if (key !== 0) record(key, V_STRING, from, i - 1, stringPlain);
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        i = scanNumber(b, i, end);
        if (i < 0) return -1;
        if (key !== 0) record(key, V_OTHER, 0, 0, true);
      } else if (c === 0x74 /* t */ && i + 4 <= end && b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65) {
        i += 4;
        if (key !== 0) record(key, V_OTHER, 0, 0, true);
      } else if (c === 0x66 /* f */ && i + 5 <= end && b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65) {
        i += 5;
        if (key !== 0) record(key, V_OTHER, 0, 0, true);
      } else if (c === 0x6e /* n */ && i + 4 <= end && b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c) {
        i += 4;
        if (key !== 0) record(key, V_NULL, 0, 0, true);
      } else return -1;
      key = 0;
      state = 2;
      continue;
    }
    if (state === 1) {
      i = skipWs(b, i, end);
      if (i >= end || b[i] !== 0x22) return -1;
      const from = i + 1;
      i = scanString(b, from, end);
      if (i < 0) return -1;
      if (depth === 1) {
        // An escaped key may spell a key of interest: not certain (rare; the full check reads it).
        if (!stringPlain) return -1;
        key = keyOf(b, from, i - 1);
        if (key !== 0 && kind[key] !== 0) return -1; // a repeated key: JSON.parse keeps the last, not worth following
        if (key !== 0) kind[key] = V_OTHER; // claimed now, so a repeat is seen even before its value is recorded
      } else if (inMessage && depth === messageDepth) {
        if (!stringPlain) return -1;
        if (i - 1 - from === 4 && b[from] === 0x72 && b[from + 1] === 0x6f && b[from + 2] === 0x6c && b[from + 3] === 0x65) {
          if (roleSeen) return -1;
          roleSeen = true;
          key = -1; // role: its value's kind is kept below
        }
      }
      i = skipWs(b, i, end);
      if (i >= end || b[i] !== 0x3a) return -1;
      i++;
      if (key === -1) {
        // The role's value, looked at here (a string is all checkEntry asks of it); then the value is scanned as any.
        const at = skipWs(b, i, end);
        roleKind = at < end && b[at] === 0x22 ? V_STRING : V_OTHER;
        key = 0;
      }
      state = 0;
      continue;
    }
    // After a value.
    if (depth === 0) {
      // One value only: anything but white space after it (a second value, two writers' lines glued) is the full
      // check's to split and word.
      i = skipWs(b, i, end);
      return (i === end || b[i] === 0x0a) && entryAccepted(b) ? i : -1;
    }
    i = skipWs(b, i, end);
    if (i >= end) return -1;
    const c = b[i]!;
    if (c === 0x2c) {
      i++;
      state = stack[depth] === 1 ? 1 : 0;
    } else if (c === 0x7d && stack[depth] === 1) {
      i++;
      depth--;
      if (inMessage && depth < messageDepth) inMessage = false;
    } else if (c === 0x5d && stack[depth] === 2) {
      i++;
      depth--;
    } else return -1;
  }
}

function record(key: number, k: number, from: number, to: number, plain: boolean): void {
  kind[key] = k;
  vStart[key] = from;
  vEnd[key] = to;
  vPlain[key] = plain ? 1 : 0;
}

/** JSON white space but LF: space, tab, CR (a '\n' ends the line: no value goes on past it). */
function skipWs(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return i;
    i++;
  }
  return i;
}

/**
 * Scans a string's contents from `i` (just after its opening quote); returns the index after its closing quote, or
 * -1 when it is not a valid JSON string of valid UTF-8. Sets stringPlain.
 */
function scanString(b: Uint8Array, i: number, end: number): number {
  let plain = true;
  for (;;) {
    // Plain ASCII runs (most of a session's bytes): byte by byte for a short string (a key), four bytes at a time past
    // that, then byte by byte up to what stopped the words.
    const lim = i + 16 < end ? i + 16 : end;
    while (i < lim && STR[b[i]!] === 0) i++;
    if (i === lim && i < end) {
      i = skipPlain(b, i, end);
      while (i < end && STR[b[i]!] === 0) i++;
    }
    if (i >= end) return -1;
    const t = STR[b[i]!];
    if (t === 1) {
      stringPlain = plain;
      return i + 1;
    }
    plain = false;
    if (t === 2) {
      const e = b[i + 1];
      if (e === 0x75 /* u */) {
        if (i + 6 > end || !isHex(b[i + 2]!) || !isHex(b[i + 3]!) || !isHex(b[i + 4]!) || !isHex(b[i + 5]!)) return -1;
        i += 6;
      } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) i += 2;
      else return -1;
    } else if (t === 3) return -1; // a raw control char: JSON.parse refuses it
    else {
      i = utf8Char(b, i, end);
      if (i < 0) return -1;
    }
  }
}

/** The Int32Array over the ArrayBuffer of the bytes last scanned (one view per buffer, not per string), and those bytes. */
let words: Int32Array = new Int32Array(0);
let wordsOf: Uint8Array | null = null;

/**
 * Skips from `i` (inside a string) whole aligned 4-byte words that hold no '"', '\\', control char or non-ASCII byte
 * (SWAR: a test per word instead of per byte); returns where the byte loop takes over (at most a word before `end`).
 */
function skipPlain(b: Uint8Array, i: number, end: number): number {
  const base = b.byteOffset;
  let at = base + i;
  // Up to a word boundary byte by byte.
  while ((at & 3) !== 0) {
    if (at - base >= end || STR[b[at - base]!] !== 0) return at - base;
    at++;
  }
  // Checked by the array's identity first: reading `.buffer` costs more than the words it skips in a short string.
  if (wordsOf !== b) {
    if (words.buffer !== b.buffer) words = new Int32Array(b.buffer, 0, b.buffer.byteLength >> 2);
    wordsOf = b;
  }
  const w = words;
  let k = at >> 2;
  // Never past the view's own end: a resizable buffer may have grown since the view was made, and a word read
  // beyond it would be undefined and pass the test below as plain text (the byte loop takes the rest).
  const stop = Math.min((base + end) >> 2, w.length);
  // Two words a test while both are plain (a long text's run), then word by word up to what stopped them.
  while (k + 1 < stop && (plainBits(w[k]!) & plainBits(w[k + 1]!)) === ALL_PLAIN) k += 2;
  while (k < stop && plainBits(w[k]!) === ALL_PLAIN) k++;
  return (k << 2) - base;
}

/** The high bit of each byte of a word, as plainBits sets it for a byte that is plain string text. */
const ALL_PLAIN = 0x80808080 | 0;

/**
 * Per byte of `x`, its high bit set when the byte is plain string text: at least 0x20 and below 0xa0 (adding 0x60
 * lands in 0x80-0xff), not '"' and not '\\' (a byte XOR the char is 0 only for it, and adding 0x7f lands in 0x80-0xff
 * for 0x01-0x80 only). The second test clears every byte of 0x80-0x9f (XOR 0x22 keeps them at 0x81 or more), so only
 * bytes below 0x80 pass. Those make no sum past 0xff, so no carry reaches the next byte: a carry comes only from a byte
 * that fails itself, and the lowest failing byte gets none, so a word passes only when each of its bytes does.
 */
function plainBits(x: number): number {
  return ((x + 0x60606060) | 0) & (((x ^ 0x22222222) + 0x7f7f7f7f) | 0) & (((x ^ 0x5c5c5c5c) + 0x7f7f7f7f) | 0) & ALL_PLAIN;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}

/** One UTF-8 character of two to four bytes at `i` (well-formed: no overlong form, no surrogate, at most U+10FFFF); the index after it, or -1. */
function utf8Char(b: Uint8Array, i: number, end: number): number {
  const c = b[i]!;
  if (c >= 0xc2 && c <= 0xdf) return i + 1 < end && (b[i + 1]! & 0xc0) === 0x80 ? i + 2 : -1;
  if (c >= 0xe0 && c <= 0xef) {
    if (i + 2 >= end) return -1;
    const c1 = b[i + 1]!;
    if ((c1 & 0xc0) !== 0x80 || (b[i + 2]! & 0xc0) !== 0x80) return -1;
    if (c === 0xe0 && c1 < 0xa0) return -1; // overlong
    if (c === 0xed && c1 >= 0xa0) return -1; // a surrogate
    return i + 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (i + 3 >= end) return -1;
    const c1 = b[i + 1]!;
    if ((c1 & 0xc0) !== 0x80 || (b[i + 2]! & 0xc0) !== 0x80 || (b[i + 3]! & 0xc0) !== 0x80) return -1;
    if (c === 0xf0 && c1 < 0x90) return -1; // overlong
    if (c === 0xf4 && c1 >= 0x90) return -1; // past U+10FFFF
    return i + 4;
  }
  return -1; // a continuation byte alone, or a lead byte UTF-8 never uses
}

/** A JSON number at `i`: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; the index after it, or -1. */
function scanNumber(b: Uint8Array, i: number, end: number): number {
  if (b[i] === 0x2d) i++;
  if (i >= end) return -1;
  if (b[i] === 0x30) i++;
  else if (b[i]! >= 0x31 && b[i]! <= 0x39) while (i < end && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
  else return -1;
  if (i < end && b[i] === 0x2e) {
    i++;
    const from = i;
    while (i < end && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
    if (i === from) return -1;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    const from = i;
    while (i < end && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
    if (i === from) return -1;
  }
  return i;
}

/** Which key of interest bytes [from, to) spell (0: none): picked by length and a letter, then compared. */
function keyOf(b: Uint8Array, from: number, to: number): number {
  let k: number;
  switch (to - from) {
    case 2: k = K_ID; break;
    case 4: k = K_TYPE; break;
    case 7: {
      const c = b[from];
      k = c === 0x6d /* m */ ? (b[from + 1] === 0x65 ? K_MESSAGE : K_MODEL_ID) : c === 0x73 /* s */ ? K_SUMMARY : K_CONTENT;
      break;
    }
    case 8: {
      const c = b[from];
      k = c === 0x74 /* t */ ? K_TARGET : b[from + 1] === 0x61 /* a */ ? K_PARENT : K_PROVIDER;
      break;
    }
    case 9: k = K_TIMESTAMP; break;
    case 10: k = K_CUSTOM_TYPE; break;
    case 13: k = K_THINKING; break;
    case 16: k = K_FIRST_KEPT; break;
    default: return 0;
  }
  return same(b, from, KEY_BYTES[k]!) ? k : 0;
}

function same(b: Uint8Array, from: number, word: Uint8Array): boolean {
  for (let j = 0; j < word.length; j++) if (b[from + j] !== word[j]) return false;
  return true;
}

/** checkEntry on what the scan recorded, and ENTRY_ID_RE on the id; sets `scanned`. Anything checkEntry would word is "not certain". */
function entryAccepted(b: Uint8Array): boolean {
  // type: a non-empty string that is not "session"; with an escape its text is not its bytes (not certain).
  if (kind[K_TYPE] !== V_STRING || vPlain[K_TYPE] === 0) return false;
  const ts = vStart[K_TYPE]!;
  const tn = vEnd[K_TYPE]! - ts;
  if (tn === 0) return false;
  // id: what ENTRY_ID_RE accepts, which holds no escape and no non-ASCII byte, so its bytes are its text.
  if (kind[K_ID] !== V_STRING) return false;
  const is = vStart[K_ID]!;
  const ie = vEnd[K_ID]!;
  if (ie - is < 1 || ie - is > 128 || ID[b[is]!] !== 2) return false;
  for (let j = is + 1; j < ie; j++) if (ID[b[j]!] === 0) return false;
  // parentId: null, or a non-empty string compared by its bytes (so: no escape in it).
  const pk = kind[K_PARENT];
  if (pk === V_NULL) {
    scanned.parentStart = -1;
    scanned.parentEnd = -1;
  } else if (pk === V_STRING && vEnd[K_PARENT]! > vStart[K_PARENT]! && noBackslash(b, vStart[K_PARENT]!, vEnd[K_PARENT]!)) {
    scanned.parentStart = vStart[K_PARENT]!;
    scanned.parentEnd = vEnd[K_PARENT]!;
  } else return false;
  if (kind[K_TIMESTAMP] !== V_STRING) return false;
  if (!knownFieldsAccepted(typeIndex(b, ts, tn))) return false;
  scanned.idStart = is;
  scanned.idEnd = ie;
  scanned.typeStart = ts;
  scanned.typeEnd = ts + tn;
  return true;
}

function noBackslash(b: Uint8Array, from: number, to: number): boolean {
  for (let j = from; j < to; j++) if (b[j] === 0x5c) return false;
  return true;
}

/** Index of the type in TYPE_NAMES, or -1 for a type checkEntry has no rule for: picked by length and a letter, then compared. */
function typeIndex(b: Uint8Array, from: number, n: number): number {
  let k: number;
  switch (n) {
    case 7: k = b[from] === 0x73 /* s */ ? 0 : 1; break;
    case 12: k = 2; break;
    case 21: k = 3; break;
    case 10: k = 4; break;
    case 14: k = b[from] === 0x62 /* b */ ? 5 : 7; break;
    case 6: k = 6; break;
    case 5: k = 8; break;
    default: return -1;
  }
  return same(b, from, TYPE_BYTES[k]!) ? k : -1;
}

/** checkKnownFields of shared/entry.ts, on the recorded kinds. */
function knownFieldsAccepted(type: number): boolean {
  switch (type) {
    case 0: // session: a second header
      return false;
    case 1: // message
      return kind[K_MESSAGE] === V_OBJECT && roleKind === V_STRING;
    case 2: // model_change
      return kind[K_PROVIDER] === V_STRING && kind[K_MODEL_ID] === V_STRING;
    case 3: // thinking_level_change
      return kind[K_THINKING] === V_STRING;
    case 4: // compaction
      return kind[K_SUMMARY] === V_STRING && (kind[K_FIRST_KEPT] === 0 || kind[K_FIRST_KEPT] === V_STRING);
    case 5: // branch_summary
      return kind[K_SUMMARY] === V_STRING;
    case 6: // custom
      return kind[K_CUSTOM_TYPE] === V_STRING;
    case 7: // custom_message
      return kind[K_CUSTOM_TYPE] === V_STRING && (kind[K_CONTENT] === V_STRING || kind[K_CONTENT] === V_ARRAY);
    case 8: // label
      return kind[K_TARGET] === V_STRING;
    default:
      return true;
  }
}

/**
 * Drops the scan's hold on the bytes it scanned last (its word view of their buffer): a caller that scanned a body or
 * a read calls it when done, so that buffer is not kept alive until the next scan.
 */
export function releaseScanned(): void {
  words = new Int32Array(0);
  wordsOf = null;
}

/** Whether bytes [aFrom, aTo) of `a` and [bFrom, bTo) of `b` are the same (ids compared without making strings of them). */
export function sameBytes(a: Uint8Array, aFrom: number, aTo: number, b: Uint8Array, bFrom: number, bTo: number): boolean {
  if (aTo - aFrom !== bTo - bFrom) return false;
  for (let j = 0; j < aTo - aFrom; j++) if (a[aFrom + j] !== b[bFrom + j]) return false;
  return true;
}
