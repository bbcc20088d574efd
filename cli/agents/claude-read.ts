// Reads one Claude Code file for the mirror: only the lines appended since the last read, unless the bytes before
// that point changed (the file was rewritten or truncated), which is reported and read again whole.
import { open } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { claudeCode, freshParseState, parseClaudeFrom, type ClaudeParseState } from '../../shared/agents/claude-code.js';
import type { AgentLine, SessionFile } from '../../shared/agents/agent.js';
import { LIMITS } from '../../shared/wire.js';
import { readJsonOrNull, writeJsonAtomic } from '../store/atomic-json.js';
import { tailHash } from '../sync/read-slice.js';
import type { FileMark } from './mirror-state.js';

/** What a read of a file left behind for the next one (beside the mirror, one small file per Claude Code file). */
export interface ReadPoint {
  offset: number;
  parse: ClaudeParseState;
}

export interface FileRead {
  file: SessionFile;
  /** Usable lines read this time (all of the file's when `fromStart`). */
  lines: AgentLine[];
  /** The file was read from its first byte (new, or its earlier part changed). */
  fromStart: boolean;
  /** It had been read before and its earlier part changed: what was mirrored of it may be mirrored again. */
  rewritten: boolean;
  /** For the bookkeeping, once its lines are in the mirror. */
  mark: FileMark;
  point?: ReadPoint;
  /** Bytes read (the file's and its read point's). */
  bytes: number;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of complete lines with every line that is not valid UTF-8 left blank (its number kept): decoding it would
 * change its bytes, and a line is only ever synced byte-exact. Returns the numbers (1-based, in `buf`) of those lines.
 */
export function decodeLines(buf: Buffer): { text: string; bad: number[] } {
  try {
    return { text: strictUtf8.decode(buf), bad: [] };
  } catch {
    // Some line holds other bytes: decode line by line to find which (rare, so not the fast path).
  }
  const parts: string[] = [];
  const bad: number[] = [];
  let start = 0;
  for (let no = 1; start <= buf.length; no++) {
    let nl = buf.indexOf(0x0a, start);
    if (nl < 0) nl = buf.length;
    try {
      parts.push(strictUtf8.decode(buf.subarray(start, nl)));
    } catch {
      parts.push('');
      bad.push(no);
    }
    start = nl + 1;
  }
  return { text: parts.join('\n'), bad };
}

async function readRange(path: string, from: number, to: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(Math.max(0, to - from));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, from + got);
      if (bytesRead === 0) break; // truncated since its stat: the rest is read next time
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

/** Where the last read of `path` stopped, when the bookkeeping and the file still agree on it; else null. */
async function resumePoint(path: string, was: FileMark | undefined, pointPath: string, size: number): Promise<{ point: ReadPoint | null; bytes: number }> {
  if (was?.offset === undefined) return { point: null, bytes: 0 };
  const point = await readJsonOrNull<ReadPoint>(pointPath);
  const bytes = point ? JSON.stringify(point).length : 0;
  if (!point || point.offset !== was.offset || size < was.offset) return { point: null, bytes };
  if (was.offset > 0 && (await tailHash(path, was.offset)) !== was.tail) return { point: null, bytes: bytes + 64 };
  return { point, bytes: bytes + 64 };
}

/**
 * Reads what is new in one file of a session: a tool-result file once (it is written once), a JSONL file from where
 * the last read stopped. Lines that cannot be read are reported with file and line; null when nothing of it can go.
 */
export async function readClaudeFile(path: string, file: SessionFile, stats: Stats, was: FileMark | undefined, pointPath: string, note: (t: string) => void): Promise<FileRead | null> {
  const mark: FileMark = { size: stats.size, mtimeMs: stats.mtimeMs };
  if (file.kind === 'tool-result') {
    // Its identity is its path: once mirrored, a later change cannot travel anyway (the other machines hold it).
    if (was !== undefined) return { file, lines: [], fromStart: false, rewritten: false, mark, bytes: 0 };
    const buf = await readRange(path, 0, stats.size);
    const { text, bad } = decodeLines(buf);
    if (bad.length > 0) {
      note(`${path}: not UTF-8 text; not synced (it stays as it is)`);
      return null;
    }
    if (buf.length > LIMITS.maxEntryBytes) {
      note(`${path}: ${buf.length} bytes, over the ${LIMITS.maxEntryBytes}-byte entry limit; not synced`);
      return null;
    }
    return { file, lines: claudeCode.parseFile(text, file).lines, fromStart: true, rewritten: false, mark, bytes: buf.length };
  }
  const resume = await resumePoint(path, was, pointPath, stats.size);
  const rewritten = was?.offset !== undefined && resume.point === null;
  if (rewritten) note(`${path}: changed before the part sessync had read (rewritten or truncated); read again from the start`);
  const start = resume.point?.offset ?? 0;
  const parse = resume.point?.parse ?? freshParseState();
  const buf = await readRange(path, start, stats.size);
  // Complete lines only: a last line still being written is read, whole, next time.
  const end = buf.lastIndexOf(0x0a) + 1;
  const { text, bad } = decodeLines(buf.subarray(0, end));
  for (const no of bad) note(`${path}:${parse.lineNo + no}: bytes that are not UTF-8; this line is not synced (it stays in the file)`);
  const parsed = parseClaudeFrom(text, file, parse);
  for (const p of parsed.problems) note(`${path}:${p.line}: ${p.reason}; this line is not synced (it stays in the file)`);
  const offset = start + end;
  mark.offset = offset;
  mark.tail = offset > 0 ? await tailHash(path, offset) : null;
  return { file, lines: parsed.lines, fromStart: start === 0, rewritten, mark, point: { offset, parse }, bytes: resume.bytes + buf.length };
}

/** Saves where this read stopped; called once its lines are in the mirror. */
export async function saveReadPoint(pointPath: string, point: ReadPoint): Promise<void> {
  await writeJsonAtomic(pointPath, point);
}
