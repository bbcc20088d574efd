// Many sessions' sync states in one file, rewritten whole at the end of a run: one durable write, however many sessions.
import { dirname } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import { readTextIfExists, writeFileAtomic } from '../store/atomic-json.js';
import { fsyncPath } from '../store/session-writer.js';
import { killPoint } from './kill-point.js';

/** The pack format this code writes and reads; a newer one is refused, never read in part or written over. */
export const PACK_FORMAT = 1;

/** The first line of a pack. */
interface PackHeader {
  sessyncStatePack: number;
  /** The journal whose compaction wrote this pack: a crash before that journal was removed leaves it, already folded in. */
  journal: string | null;
  written: string;
}

/**
 * Each later line is `{"session":<id>,"state":<state>}`, the id first so that a damaged line still names its session
 * (the state is parsed when it is read, not when the pack is opened: a run that loads one session parses one line).
 */
const LINE_HEAD = /^\{"session":("(?:[^"\\]|\\.)*"),"state":/;

export function packLine(session: string, state: unknown): string {
  return `{"session":${JSON.stringify(session)},"state":${JSON.stringify(state)}}`;
}

export class StatePack<S> {
  private constructor(
    readonly path: string,
    /** Each session's line as it is in the file (carried as it is into the next pack unless a newer state replaces it). */
    readonly lines: ReadonlyMap<string, string>,
    private readonly lineNumbers: ReadonlyMap<string, number>,
    readonly journal: string | null,
  ) {}

  /** The pack as `write` just wrote it (spares reading back what is in memory already). */
  static of<S>(path: string, lines: ReadonlyMap<string, string>, journal: string | null): StatePack<S> {
    const numbers = new Map<string, number>();
    let n = 1;
    for (const session of lines.keys()) numbers.set(session, ++n);
    return new StatePack<S>(path, lines, numbers, journal);
  }

  /** The pack at `path`, or null when there is none. A header it cannot read or of a newer format is an error. */
  static async read<S>(path: string): Promise<StatePack<S> | null> {
    const text = await readTextIfExists(path);
    if (text === null) return null;
    const rows = text.split('\n');
    let header: PackHeader;
    try {
      header = JSON.parse(rows[0]!) as PackHeader;
    } catch {
      header = null as unknown as PackHeader;
    }
    if (!header || typeof header.sessyncStatePack !== 'number') {
      throw new SessyncError('corrupt', `sync state pack ${path} has a damaged first line; move it away to rebuild the sync state (the next sync re-sends what the server lacks, without duplicates)`);
    }
    if (header.sessyncStatePack > PACK_FORMAT) {
      throw new SessyncError('unsupported_version', `sync state pack ${path} is of format ${header.sessyncStatePack}, newer than this sessync reads (${PACK_FORMAT}): upgrade sessync (the file is left as it is)`);
    }
    const lines = new Map<string, string>();
    const numbers = new Map<string, number>();
    // Written whole and renamed into place, the file ends with '\n'; a last piece without one is damage like any other.
    const last = rows.at(-1) === '' ? rows.length - 1 : rows.length;
    for (let i = 1; i < last; i++) {
      const row = rows[i]!;
      if (row === '') continue;
      const head = LINE_HEAD.exec(row);
      let session: unknown;
      try {
        session = head ? JSON.parse(head[1]!) : undefined;
      } catch {
        session = undefined;
      }
      if (typeof session !== 'string') {
        // Which session's state it held cannot be told: any load could be missing it, so none is answered.
        throw new SessyncError('corrupt', `sync state pack ${path} has a damaged line ${i + 1} that names no session; move the file away to rebuild the sync state (the next sync re-sends what the server lacks, without duplicates)`);
      }
      lines.set(session, row);
      numbers.set(session, i + 1);
    }
    return new StatePack<S>(path, lines, numbers, typeof header.journal === 'string' ? header.journal : null);
  }

  has(session: string): boolean {
    return this.lines.has(session);
  }

  /** The session's state, null when the pack has none; a damaged line is an error naming the session. */
  get(session: string): S | null {
    const row = this.lines.get(session);
    if (row === undefined) return null;
    let rec: { session?: unknown; state?: unknown } | null = null;
    try {
      rec = JSON.parse(row) as { session?: unknown; state?: unknown };
    } catch {
      rec = null;
    }
    if (!rec || rec.session !== session || !rec.state || typeof rec.state !== 'object') {
      throw new SessyncError(
        'corrupt',
        `sync state of session ${session} in ${this.path} (line ${this.lineNumbers.get(session)}) is damaged; delete that line to rebuild that session's state (the next sync re-sends what the server lacks, without duplicates)`,
        { details: { session, line: this.lineNumbers.get(session) } },
      );
    }
    return rec.state as S;
  }

  /**
   * Writes `lines` (session -> line, see packLine) as the pack, durably: temp file, fsync, rename, and the folder
   * fsynced, so the pack is there after a power cut before anything it replaces (a journal, state files) is removed.
   */
  static async write(path: string, lines: Iterable<string>, journal: string | null): Promise<void> {
    const header: PackHeader = { sessyncStatePack: PACK_FORMAT, journal, written: new Date().toISOString() };
    let text = JSON.stringify(header) + '\n';
    for (const l of lines) text += l + '\n';
    await writeFileAtomic(path, text);
    await fsyncPath(dirname(path)); // the new name durable before what it replaces is removed
    killPoint('pack-written');
  }
}
