// Merge of pulled entries into a local log: a grow-only set union by entry id, with conflicts set aside, never dropped.
import type { SessionEntry } from './entry.js';
import { jsonStringify } from './json-stringify.js';
import { newerTip } from './tree.js';

/** Same id, different content: both sides are kept (the local one in the log, the remote one aside) and reported. */
export interface MergeConflict {
  id: string;
  /** The entry the local log holds (or the first incoming one, when two incoming entries disagree). */
  kept: SessionEntry;
  /** The other version, which the caller writes to the conflicts file. */
  aside: SessionEntry;
  /** Host whose batch carried the aside version, when known. */
  host?: string;
}

export interface MergeResult {
  /** Entries new to the local log, ordered so that a parent comes before its children. */
  toAppend: SessionEntry[];
  /** Incoming entries the log already holds with the same content. */
  duplicates: number;
  conflicts: MergeConflict[];
}

/** An incoming entry and the host whose batch carried it. */
export interface IncomingEntry {
  entry: SessionEntry;
  host?: string;
  /** The exact line it arrived as: what is appended, so a line travels byte-exact (not re-serialised). */
  text?: string;
}

/** Each incoming entry's exact line, by the entry object (the merge returns the very objects it was given). */
export function exactTexts(incoming: readonly IncomingEntry[]): Map<object, string> {
  const out = new Map<object, string>();
  for (const x of incoming) if (x.text !== undefined) out.set(x.entry, x.text);
  return out;
}

/**
 * JSON with object keys sorted: two machines that serialised the same entry with different key order
 * still compare equal. Content is what matters, not bytes.
 */
export function canonicalJson(v: unknown): string {
  // Iterative: an entry nested 100,000 deep must compare like any other, not overflow the stack.
  return jsonStringify(v, { sortKeys: true }) ?? 'null';
}

export function sameContent(a: SessionEntry, b: SessionEntry): boolean {
  return a === b || canonicalJson(a) === canonicalJson(b);
}

/**
 * Union by id. `local` maps each id the log holds to its entry (or its canonical JSON, cheaper to keep).
 * Incoming entries already present with the same content are counted as duplicates; with different content
 * they become conflicts. New entries are returned parents-first; the caller appends them and adds them to `local`.
 */
export function mergeEntries(local: ReadonlyMap<string, SessionEntry | string>, incoming: readonly IncomingEntry[]): MergeResult {
  // Canonical JSON only for an id met twice: a new entry (nearly all of a first pull) is never serialised here.
  const fresh = new Map<string, { entry: SessionEntry; canon?: string }>();
  const conflicts: MergeConflict[] = [];
  let duplicates = 0;
  for (const { entry, host } of incoming) {
    const have = local.get(entry.id);
    if (have !== undefined) {
      const haveCanon = typeof have === 'string' ? have : canonicalJson(have);
      if (haveCanon === canonicalJson(entry)) duplicates++;
      else conflicts.push({ id: entry.id, kept: typeof have === 'string' ? (JSON.parse(have) as SessionEntry) : have, aside: entry, ...(host ? { host } : {}) });
      continue;
    }
    const prev = fresh.get(entry.id);
    if (prev) {
      prev.canon ??= canonicalJson(prev.entry);
      if (prev.canon === canonicalJson(entry)) duplicates++;
      else conflicts.push({ id: entry.id, kept: prev.entry, aside: entry, ...(host ? { host } : {}) });
      continue;
    }
    fresh.set(entry.id, { entry });
  }
  return { toAppend: parentsFirst([...fresh.values()].map((f) => f.entry), { leafLast: true }), duplicates, conflicts };
}

/**
 * Stable order where an entry whose parent is also in the list comes after it. Entries whose parent is
 * elsewhere (already local, or missing) keep their relative order. A cycle cannot block: its members
 * are emitted in input order once nothing else is ready.
 */
export function parentsFirst(entries: readonly SessionEntry[], opts: { leafLast?: boolean } = {}): SessionEntry[] {
  const index = new Map<string, number>();
  entries.forEach((e, i) => index.set(e.id, i));
  const children = new Map<number, number[]>();
  const waiting: boolean[] = entries.map(() => false);
  entries.forEach((e, i) => {
    const p = e.parentId === null ? undefined : index.get(e.parentId);
    if (p !== undefined && p !== i) {
      waiting[i] = true;
      const list = children.get(p);
      if (list) list.push(i);
      else children.set(p, [i]);
    }
  });
  // leafLast: the newest tip and its ancestors in the list are emitted last, so the file's last line is that tip.
  // pi takes the last line as the leaf; sessync takes the newest tip (the tree's leaf rule, newerTip): after a pull
  // they agree whenever they can.
  const onLeafPath: boolean[] = entries.map(() => false);
  if (opts.leafLast && entries.length) {
    let best = -1;
    for (let i = 0; i < entries.length; i++) if (!children.has(i) && (best < 0 || newerTip(entries[i]!, entries[best]!))) best = i;
    for (let i = best, guard = 0; i >= 0 && !onLeafPath[i] && guard <= entries.length; guard++) {
      onLeafPath[i] = true;
      const p = entries[i]!.parentId;
      i = p === null ? -1 : (index.get(p) ?? -1);
    }
    for (const list of children.values()) list.sort((x, y) => Number(onLeafPath[x]) - Number(onLeafPath[y]));
  }
  const out: SessionEntry[] = [];
  const done: boolean[] = entries.map(() => false);
  // Depth-first from each ready entry, iteratively (sessions can be thousands deep).
  const emit = (start: number) => {
    const stack = [start];
    while (stack.length) {
      const i = stack.pop()!;
      if (done[i]) continue;
      done[i] = true;
      out.push(entries[i]!);
      const kids = children.get(i);
      if (kids) for (let k = kids.length - 1; k >= 0; k--) if (!done[kids[k]!]) stack.push(kids[k]!);
    }
  };
  let lastRoot = -1;
  for (let i = 0; i < entries.length; i++) {
    if (waiting[i] || done[i]) continue;
    if (onLeafPath[i]) lastRoot = i;
    else emit(i);
  }
  if (lastRoot >= 0) emit(lastRoot);
  for (let i = 0; i < entries.length; i++) if (!done[i]) emit(i); // cycles only
  return out;
}
