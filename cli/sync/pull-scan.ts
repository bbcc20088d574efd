// A page that creates a file, checked by one scan of each body's bytes: no text, no parsed entries, no line strings.
import { sameBytes, releaseScanned, scanEntry, scanned } from '../../shared/entry-line-scan.js';
import { LIMITS } from '../../shared/wire.js';
import { chainState, countMessage, newerTime, type MessageTally } from '../store/tail-state.js';
import type { SessionEntry } from '../../shared/entry.js';
import type { OpenedBatch } from '../keys/open-pull.js';
import { bodyMatches, type NewFileLines } from './pull-decode.js';

/** What scanNewFile made: the file's lines, or how many leading batches it found matching their sha-256 before it gave up. */
export type ScannedPage = { fresh: NewFileLines } | { fresh?: undefined; shaChecked: number };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const MESSAGE = Uint8Array.from('message', (c) => c.charCodeAt(0));
const SESSION_INFO = Uint8Array.from('session_info', (c) => c.charCodeAt(0));
const AGENT_LINE = Uint8Array.from('agent_line', (c) => c.charCodeAt(0));

/**
 * The new file's lines when the page is the common first pull: every batch plain JSONL matching its sha-256, every line
 * one scanEntry is certain of (so valid UTF-8, within the depth limit, an entry checkEntry accepts), each body ended
 * by its newline, and the entries one chain (no id twice, each parent the entry before; the first's outside the page).
 * The bodies then are the file's bytes as they came, and the tail state needs only ids, parents, types, the last
 * timestamp, a session_info's name and what an agent's line says of its messages, read from the bytes. Anything else (a damaged batch, a line the scan is not
 * certain of, a fork, a duplicate) gives up: the caller decodes the page in full, which skips and names what is bad,
 * and which need not hash again the `shaChecked` first batches. Parsing every line was most of a first pull's CPU.
 */
export function scanNewFile(batches: readonly OpenedBatch[]): ScannedPage {
  /** A hash of each id's bytes: no id string is made (a TextDecoder call per line cost as much as the scan). Two ids
   * of the same hash give up (the full decode then tells a true repeat from a collision), so a collision costs time only. */
  const ids = new Set<number>();
  const lines: Uint8Array[] = [];
  let root: string | null = null;
  /** The line before: its body and where its id lies (the next line's parent must be those bytes). */
  let prev: Uint8Array | null = null;
  let prevStart = 0;
  let prevEnd = 0;
  let lastStart = 0;
  let lastEnd = 0;
  const tally: MessageTally = { messageCount: 0 };
  let name: string | undefined;
  /** The newest time of the agents' lines (TailState.newestTimedAt). */
  let newest: string | null = null;
  let n = 0;
  for (const [k, b] of batches.entries()) {
    const body = b.body;
    if (b.damaged !== undefined || b.envelope.encoding !== 'jsonl' || typeof body === 'string' || !bodyMatches(b)) return { shaChecked: k };
    const giveUp = { shaChecked: k + 1 };
    const end = body.byteLength;
    if (end === 0) continue;
    try {
      for (let i = 0; i < end;) {
        const nl = scanEntry(body, i, end, LIMITS.maxJsonDepth);
        if (nl < 0 || nl >= end) return giveUp; // not certain, or the body's last line has no newline: the full decode words it
        const { idStart, idEnd, parentStart, parentEnd, typeStart, typeEnd } = scanned;
        if (prev === null) {
          root = parentStart < 0 ? null : utf8.decode(body.subarray(parentStart, parentEnd));
        } else if (parentStart < 0 || !sameBytes(body, parentStart, parentEnd, prev, prevStart, prevEnd)) return giveUp;
        const id = hashOf(body, idStart, idEnd);
        if (ids.has(id)) return giveUp;
        ids.add(id);
        if (sameBytes(body, typeStart, typeEnd, MESSAGE, 0, MESSAGE.length)) tally.messageCount++;
        // An agent's line (a mirror's entry) counts as its agent says, from the line it holds: that one is parsed (its time too).
        else if (sameBytes(body, typeStart, typeEnd, AGENT_LINE, 0, AGENT_LINE.length)) {
          const e = JSON.parse(utf8.decode(body.subarray(i, nl))) as SessionEntry;
          countMessage(tally, e);
          newest = newerTime(newest, e.timestamp);
        } else if (sameBytes(body, typeStart, typeEnd, SESSION_INFO, 0, SESSION_INFO.length)) {
          const info = JSON.parse(utf8.decode(body.subarray(i, nl))) as { name?: unknown };
          if (typeof info.name === 'string') name = info.name;
        }
        prev = body;
        prevStart = idStart;
        prevEnd = idEnd;
        lastStart = i;
        lastEnd = nl;
        n++;
        i = nl + 1;
      }
    } finally {
      releaseScanned();
    }
    lines.push(body);
  }
  // No entries at all (rare: empty batches) is left to the full decode too, as is a root that is one of the page's ids.
  if (prev === null || (root !== null && ids.has(hashOf(Buffer.from(root, 'utf8'), 0, Buffer.byteLength(root))))) return { shaChecked: batches.length };
  // The tip's timestamp: one parse per page, of its last line (certain to be an entry with a timestamp string).
  const lastLine = JSON.parse(utf8.decode(prev.subarray(lastStart, lastEnd))) as { id: string; timestamp: string };
  const mark = tally.messageMark;
  const state = chainState({ root, lastId: lastLine.id, lastTimestamp: lastLine.timestamp, entries: n, messages: tally.messageCount, ...(mark !== undefined ? { mark } : {}), ...(name !== undefined ? { name } : {}), newestTimedAt: newest });
  return { fresh: { lines, state, count: n, duplicates: 0, conflicts: [] } };
}

/** FNV-1a of bytes [from, to): 32 bits, for telling ids apart (equal hashes are treated as the same id). */
function hashOf(b: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}
