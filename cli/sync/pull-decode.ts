// A pulled page's batches as entries, each body checked and parsed once; for a file being created, also its bytes.
import { createHash } from 'node:crypto';
import { checkEntry, type SessionEntry } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { findTooDeepText } from '../../shared/json-limits.js';
import { serializeLine } from '../../shared/jsonl.js';
import { exactTexts, mergeEntries, type IncomingEntry, type MergeConflict } from '../../shared/merge.js';
import { LIMITS } from '../../shared/wire.js';
import type { EntryLines } from '../store/session-writer.js';
import { stateOfChain, stateOfEntries } from '../store/tail-state.js';
import type { OpenedBatch } from '../keys/open-pull.js';
import type { BatchProblem } from './session-sync-state.js';
import type { SyncContext } from './sync-context.js';

/**
 * The entries of one stored batch. What an older server may have stored damaged is skipped and named, never
 * fatal: a body that does not match its sha-256 (the whole batch), and lines that are not JSON, nest deeper
 * than LIMITS.maxJsonDepth, or are not entries (each line alone). Only an encoding this client cannot read
 * stops the session's pull: a newer sessync can, so its cursor must not move past it. `shaChecked`: the caller
 * already found the body's sha-256 to match (bodyMatches), so it is not computed twice.
 */
export function decode(session: string, b: OpenedBatch, note: SyncContext['note'], shaChecked = false): Decoded {
  const { host, seq } = b.envelope;
  if (b.damaged !== undefined) {
    // The server could not read the object it stores (an older server wrote it): it names host and seq only.
    const reason = `the server cannot read it (stored damaged: ${b.damaged})`;
    note?.(`session ${session}: batch ${seq} of host ${host} skipped: ${reason}`);
    return { entries: [], skipped: 0, problems: [{ host, seq, reason: reason.slice(0, 300) }] };
  }
  if (b.envelope.encoding !== 'jsonl') {
    throw new SessyncError('unsupported_version', `session ${session}: batch ${seq} of host ${host} is ${b.envelope.encoding}-encrypted; this sessync cannot read it`);
  }
  // An opened sealed batch was checked by its GCM tag, stronger than the sha-256 (which is of its ciphertext).
  // The sha-256 is of the body as it came: a string's UTF-8 (JSON), or the frame's bytes.
  const matches = shaChecked || bodyMatches(b);
  const text = matches ? bodyText(b.body) : null;
  if (text === null) {
    const reason = `its body ${matches ? 'is not UTF-8' : 'does not match its sha-256'} (stored damaged); none of its ${b.envelope.entryCount} entries merged`;
    note?.(`session ${session}: batch ${seq} of host ${host} skipped: ${reason}`);
    return { entries: [], skipped: 0, problems: [{ host, seq, reason }] };
  }
  const entries: IncomingEntry[] = [];
  const problems: BatchProblem[] = [];
  let lineNo = 0;
  for (const line of text.split('\n')) {
    lineNo++;
    if (line.trim() === '') continue;
    let v: unknown;
    let why: string | null;
    // Depth first, on the text: merging, writing and redacting a value this deep is what the limit spares.
    if (findTooDeepText(line, LIMITS.maxJsonDepth)) why = `it nests JSON deeper than ${LIMITS.maxJsonDepth} levels (the limit)`;
    else {
      try {
        v = JSON.parse(line);
        why = checkEntry(v);
      } catch (e) {
        why = `not JSON (${(e as Error).message})`;
      }
    }
    if (why) {
      problems.push({ host, seq, line: lineNo, reason: why.slice(0, 300) });
      note?.(`session ${session}: line ${lineNo} of batch ${seq} from host ${host} not merged: ${why}`);
      continue;
    }
    entries.push({ entry: v as SessionEntry, host, text: line });
  }
  // Every line an entry, each ended by its newline: the body is those lines exactly as a file holds them.
  const exact = entries.length === lineNo - 1 && text.endsWith('\n');
  return { entries, skipped: problems.length, problems, ...(exact ? { whole: b.body } : {}) };
}

export interface Decoded {
  entries: IncomingEntry[];
  skipped: number;
  problems: BatchProblem[];
  /** The body (bytes, or text: encrypted or JSON answers), when it is exactly its entries' lines (each with its newline). */
  whole?: string | Uint8Array;
}

/** Whether the body is the one its envelope names: authenticated when it was opened, else its sha-256. */
export function bodyMatches(b: OpenedBatch): boolean {
  return b.authenticated === true || sha256Of(b.body) === b.envelope.sha256;
}

function sha256Of(body: string | Uint8Array): string {
  return (typeof body === 'string' ? createHash('sha256').update(body, 'utf8') : createHash('sha256').update(body)).digest('hex');
}

// ignoreBOM: a leading BOM stays in the text (and fails its line), as it would in a JSON string; the bytes are written as they are.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A body as text; null for bytes that are not UTF-8 (a server validates JSONL as UTF-8 when it is pushed). */
function bodyText(body: string | Uint8Array): string | null {
  if (typeof body === 'string') return body;
  try {
    return utf8.decode(body);
  } catch {
    return null;
  }
}

/** What a page holds for a file being created: its bytes, their tail state, and the merge's counts. */
export interface NewFileLines extends EntryLines {
  /** Entries the file gets (ids met twice are counted in `duplicates` or set aside in `conflicts`). */
  count: number;
  duplicates: number;
  conflicts: MergeConflict[];
  /** The entries written, kept only when asked for (a later page of the same session merges against them). */
  entries?: SessionEntry[];
}

/**
 * A new file's lines from a page's batches, merged as mergeEntries would into an empty log. The usual first pull
 * needs no merge: one chain in arrival order (each entry's parent the one before, no id twice) is already what the
 * merge returns, parents first with the newest tip last. The bytes are the batches' bodies as they came wherever
 * a body is exactly its entries' lines, else those lines' exact texts; nothing is serialised or parsed again. The
 * parsed entries are not kept (unless `keep`): only the lines and the tail state they make outlive this call.
 * `decoded` null: `incoming` is not the page's batches whole (some entries wait for their parent), so every line is
 * its entry's exact text.
 */
export function newFileLines(decoded: readonly Decoded[] | null, incoming: readonly IncomingEntry[], keep: boolean): NewFileLines {
  if (isChain(incoming)) {
    const entries = incoming.map((x) => x.entry);
    const lines: Uint8Array[] = [];
    if (decoded === null) lines.push(linesOf(incoming.map((x) => x.text!)));
    else for (const d of decoded) if (d.entries.length > 0) lines.push(d.whole !== undefined ? bytesOf(d.whole) : linesOf(d.entries.map((x) => x.text!)));
    return { lines, state: stateOfChain(entries), count: entries.length, duplicates: 0, conflicts: [], ...(keep ? { entries } : {}) };
  }
  const m = mergeEntries(new Map(), incoming);
  const texts = exactTexts(incoming);
  const lines = (decoded === null ? undefined : wholeBodies(decoded, incoming, m.toAppend)) ?? [linesOf(m.toAppend.map((e) => texts.get(e) ?? serializeLine(e)))];
  return { lines, state: stateOfEntries(m.toAppend, { checked: true }), count: m.toAppend.length, duplicates: m.duplicates, conflicts: m.conflicts, ...(keep ? { entries: m.toAppend } : {}) };
}

/** One chain in order: no id twice, each entry's parent the entry before it (the first's outside the page). */
function isChain(incoming: readonly IncomingEntry[]): boolean {
  const ids = new Set<string>();
  let prev: string | null = null;
  for (const { entry, text } of incoming) {
    if (text === undefined || ids.has(entry.id) || (prev !== null && entry.parentId !== prev)) return false;
    ids.add(entry.id);
    prev = entry.id;
  }
  const first = incoming[0]?.entry.parentId;
  return first === undefined || first === null || !ids.has(first);
}

function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/** Lines as the UTF-8 bytes of a file's lines, each ended by its newline. */
function linesOf(texts: readonly string[]): Uint8Array {
  return Buffer.from(texts.length === 0 ? '' : texts.join('\n') + '\n', 'utf8');
}

/**
 * The batches' bytes, when the merge keeps every incoming entry in arrival order (no id twice, parents already
 * first) and every body is exactly its entries' lines; else undefined.
 */
function wholeBodies(decoded: readonly Decoded[], incoming: readonly IncomingEntry[], toAppend: readonly SessionEntry[]): Uint8Array[] | undefined {
  if (toAppend.length !== incoming.length || toAppend.some((e, i) => e !== incoming[i]!.entry)) return undefined;
  const out: Uint8Array[] = [];
  for (const d of decoded) {
    if (d.entries.length === 0) continue;
    if (d.whole === undefined) return undefined;
    out.push(bytesOf(d.whole));
  }
  return out;
}
