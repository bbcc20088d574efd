// Versioned session migrations (v1 -> v2 -> v3), run in order, idempotent, with ids every machine computes alike.
import { CURRENT_VERSION, type SessionEntry, type SessionHeader } from './entry.js';
import { SessyncError } from './errors.js';
import { deterministicId } from './ids.js';
import type { ParsedSession } from './jsonl.js';

interface Migration {
  from: number;
  to: number;
  run(header: SessionHeader, entries: SessionEntry[], lineIndex: (i: number) => number, piece: (i: number) => number): Promise<{ header: SessionHeader; entries: SessionEntry[] }>;
}

/**
 * v1 -> v2: pi's linear files get ids and a linear parent chain.
 * - id: kept when the line has one, else deterministicId(`${headerId}:${lineIndex}`), lineIndex =
 *   the line's 0-based position in the file (header = 0), so two machines migrating the same file
 *   produce the same ids (sync does not duplicate the history), even if one of them has a corrupt
 *   line elsewhere.
 * - compaction firstKeptEntryIndex (a line index, header = 0) -> firstKeptEntryId; dropped when it
 *   names no loaded entry.
 * - header: provider/modelId/thinkingLevel stay, and also become a model_change and a
 *   thinking_level_change at the root (ids derived from the session id, timestamp the header's): pi
 *   reads no header field, and without them pi resumes an old session with no model.
 *   branchedFrom becomes parentSession.
 */
const v1ToV2: Migration = {
  from: 1,
  to: 2,
  async run(header, entries, lineIndex, piece) {
    // A line split into several values (two writers raced) gives its later values a seed of their own.
    const seed = (i: number) => (piece(i) === 0 ? `${header.id}:${lineIndex(i)}` : `${header.id}:${lineIndex(i)}:${piece(i)}`);
    const ids = await Promise.all(entries.map((e, i) => (typeof e.id === 'string' && e.id !== '' ? e.id : deterministicId(seed(i)))));
    const byLine = new Map<number, string>();
    for (let i = entries.length - 1; i >= 0; i--) byLine.set(lineIndex(i), ids[i]!); // a split line's index names its first value
    const settings = await headerSettings(header);
    const out: SessionEntry[] = [...settings];
    let prev: string | null = settings.at(-1)?.id ?? null;
    for (let i = 0; i < entries.length; i++) {
      const { type, id: _id, parentId, timestamp, ...rest } = entries[i]!;
      const id = ids[i]!;
      const entry: SessionEntry = {
        type,
        id,
        parentId: parentId === null || typeof parentId === 'string' ? parentId : prev,
        timestamp: typeof timestamp === 'string' ? timestamp : header.timestamp,
        ...rest,
      };
      if (type === 'compaction' && typeof rest.firstKeptEntryIndex === 'number') {
        const k = rest.firstKeptEntryIndex;
        delete entry.firstKeptEntryIndex;
        const target = byLine.get(k);
        if (typeof entry.firstKeptEntryId !== 'string' && target !== undefined) entry.firstKeptEntryId = target;
      }
      out.push(entry);
      prev = id;
    }
    const { branchedFrom, ...h } = header;
    const newHeader: SessionHeader = { ...h, version: 2 };
    if (typeof branchedFrom === 'string' && newHeader.parentSession === undefined) newHeader.parentSession = branchedFrom;
    else if (branchedFrom !== undefined) newHeader.branchedFrom = branchedFrom;
    return { header: newHeader, entries: out };
  },
};

/** The v1 header's model and thinking level as the entries pi reads, chained from the root. */
async function headerSettings(header: SessionHeader): Promise<SessionEntry[]> {
  const out: SessionEntry[] = [];
  const add = async (key: string, type: string, fields: Record<string, unknown>) => {
    const id = await deterministicId(`${header.id}:header:${key}`);
    out.push({ type, id, parentId: out.at(-1)?.id ?? null, timestamp: header.timestamp, ...fields });
  };
  if (typeof header.provider === 'string' && header.provider !== '' && typeof header.modelId === 'string' && header.modelId !== '') {
    await add('model', 'model_change', { provider: header.provider, modelId: header.modelId });
  }
  if (typeof header.thinkingLevel === 'string' && header.thinkingLevel !== '') {
    await add('thinking', 'thinking_level_change', { thinkingLevel: header.thinkingLevel });
  }
  return out;
}

/** v2 -> v3: message role "hookMessage" is now "custom". */
const v2ToV3: Migration = {
  from: 2,
  to: 3,
  async run(header, entries) {
    const out = entries.map((e) => {
      const m = e.message as { role?: unknown } | undefined;
      if (e.type !== 'message' || !m || m.role !== 'hookMessage') return e;
      return { ...e, message: { ...m, role: 'custom' } };
    });
    return { header: { ...header, version: 3 }, entries: out };
  },
};

/** In order; each step's `from` is the previous step's `to`. */
export const MIGRATIONS: readonly Migration[] = [v1ToV2, v2ToV3];

/**
 * Brings a parsed session to CURRENT_VERSION. Never mutates its input (entries that need no change
 * are shared, not copied). Idempotent: a current file comes back unchanged with changed = false.
 * A file from a newer writer (version > CURRENT_VERSION) is returned as it is: this library
 * preserves what it does not know. No header: SessyncError('corrupt').
 */
export async function migrateSession(parsed: ParsedSession): Promise<{
  header: SessionHeader;
  entries: SessionEntry[];
  fromVersion: number;
  toVersion: number;
  changed: boolean;
}> {
  if (!parsed.header) {
    throw new SessyncError('corrupt', 'the session has no valid header line ({"type":"session",...}); it cannot be migrated', {
      details: { problems: parsed.problems.slice(0, 10) },
    });
  }
  const fromVersion = parsed.version;
  let header = parsed.header;
  let entries = parsed.entries;
  let version = fromVersion;
  // Line index (header = 0) of each entry; without line numbers, entries are taken as consecutive lines.
  const lines = parsed.entryLines;
  const lineIndex = (i: number): number => (lines && lines.length === parsed.entries.length ? lines[i]! - 1 : i + 1);
  const pieces = parsed.entryPieces;
  const piece = (i: number): number => (pieces && pieces.length === parsed.entries.length ? pieces[i]! : 0);
  for (const m of MIGRATIONS) {
    if (version === m.from) {
      ({ header, entries } = await m.run(header, entries, lineIndex, piece));
      version = m.to;
    }
  }
  if (version < CURRENT_VERSION) {
    throw new SessyncError('unsupported_version', `session format version ${fromVersion} has no migration path to ${CURRENT_VERSION}`);
  }
  return { header, entries, fromVersion, toVersion: version, changed: version !== fromVersion };
}
