// One append-only file of session states for a run that pushes many sessions: one fsync per request, not per save.
import { open, rm, type FileHandle } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { readTextIfExists } from '../store/atomic-json.js';
import { dirname } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import { mkdirPrivate, PRIVATE_FILE } from '../store/private-fs.js';
import { fsyncDir } from '../store/session-writer.js';
import { appendWhole } from '../store/append-whole.js';
import { killPoint } from './kill-point.js';

/**
 * A journal line: a session's whole state (the last one of a session wins), or that its state was forgotten. The
 * first line names the journal (`{"journal":<id>}`): the pack its compaction writes says which journal it folded in.
 */
export type JournalRecord<S> = { state: S } | { forget: string } | { journal: string };

/** What a killed run's journal holds: the last record of each session, and the journal's id (null: an older sessync's). */
export interface JournalReplay<S> {
  states: Map<string, S | null>;
  id: string | null;
}

/**
 * While it is open, saves land in memory and `flush` appends the states saved since the last flush as one write and
 * one fsync. The caller flushes before each request that carries a batch written down since, so every batch the
 * server may have got is durable on this side first (a resend after a crash is the same batch, never a new one).
 * An acknowledgement is made durable by the next flush or by compaction; a crash before that only resends a batch
 * the server answers as a retry. A crash leaves the file behind; `replay` reads it back under the sync lock.
 */
export class StateJournal<S extends { session: string }> {
  /** The newest state of every session saved while the journal is open (null: forgotten). */
  readonly latest = new Map<string, S | null>();
  private dirty = new Set<string>();
  private fh: FileHandle | null = null;
  /** Flushes run one after another: each writes what was saved before it started. */
  private chain: Promise<void> = Promise.resolve();
  /** Durable writes (fsyncs) made: tests and benches count them per request. */
  fsyncs = 0;
  /** Folders with new files in them whose names are not durable yet (see needsFolderSync). */
  private folders = new Set<string>();
  /** Folder fsyncs made for needsFolderSync. */
  folderFsyncs = 0;
  /** Names this journal in its first line and in the pack its compaction writes. */
  readonly id = randomUUID();
  private named = false;

  constructor(readonly path: string) {}

  set(session: string, s: S | null): void {
    this.latest.set(session, s);
    this.dirty.add(session);
  }

  /** Makes every state saved so far durable: one appended write and one fsync (none when nothing changed). */
  flush(): Promise<void> {
    const run = this.chain.then(() => this.writeDirty());
    this.chain = run.catch(() => undefined); // the failure goes to this caller; the next flush writes its states again
    return run;
  }

  /**
   * `dir` got a new file whose name is not fsynced yet: the next flush (or close) fsyncs the folder before it writes
   * anything, so no state saved after the file was made is durable before the file can be found after a power cut.
   * A wave of new files in one folder then costs one folder fsync per request, not one or more per wave.
   */
  needsFolderSync(dir: string): void {
    this.folders.add(dir);
  }

  private async writeDirty(): Promise<void> {
    if (this.dirty.size === 0 && this.folders.size === 0) return;
    // States first, then folders: every state taken here was saved after its file's folder was noted.
    const names = [...this.dirty];
    this.dirty.clear();
    try {
      await this.syncFolders();
    } catch (e) {
      for (const n of names) this.dirty.add(n); // nothing of them written: the next flush tries again
      throw e;
    }
    if (names.length === 0) return;
    let text = this.named ? '' : JSON.stringify({ journal: this.id }) + '\n';
    for (const n of names) {
      const s = this.latest.get(n);
      const rec: JournalRecord<S> = s ? { state: s } : { forget: n };
      text += JSON.stringify(rec) + '\n';
    }
    try {
      if (!this.fh) {
        await mkdirPrivate(dirname(this.path));
        this.fh = await open(this.path, 'a', PRIVATE_FILE);
      }
      // Whole or not at all: a short write (a full disk) taken as durable would leave a torn record that the next
      // flush's records are glued onto, and replay refuses a journal with a damaged line before its last.
      await appendWhole(this.fh, this.path, Buffer.from(text, 'utf8'), { beforeSync: () => killPoint('journal-written') });
      this.named = true;
      this.fsyncs++;
      killPoint('journal-synced');
    } catch (e) {
      for (const n of names) this.dirty.add(n); // not durable: written again by the next flush (a record twice is harmless)
      throw e;
    }
  }

  private async syncFolders(): Promise<void> {
    if (this.folders.size === 0) return;
    const dirs = [...this.folders];
    this.folders.clear();
    try {
      await Promise.all(dirs.map((d) => fsyncDir(d)));
    } catch (e) {
      for (const d of dirs) this.folders.add(d);
      throw e;
    }
    this.folderFsyncs += dirs.length;
    killPoint('journal-folders-synced');
  }

  /** Waits for flushes under way and closes the file (kept: it is removed once its states are written out, in the pack or own files). */
  async close(): Promise<void> {
    await this.chain;
    await this.fh?.close();
    this.fh = null;
    await this.syncFolders(); // before compaction makes the states durable elsewhere, and before the run says it is done
  }

  /** The journal left by a run that did not finish: the last record of each session, in file order; null when none. */
  static async replay<S extends { session: string }>(path: string): Promise<JournalReplay<S> | null> {
    const text = await readTextIfExists(path);
    if (text === null) return null;
    const out = new Map<string, S | null>();
    let id: string | null = null;
    const lines = text.split('\n');
    // The piece after the last '\n' is empty, or torn by a kill in the middle of an append: the states in it were
    // never sent (a request leaves only after its flush), so dropping it loses nothing.
    for (let i = 0; i < lines.length - 1; i++) {
      const line = lines[i]!;
      if (line === '') continue;
      let rec: JournalRecord<S>;
      try {
        rec = JSON.parse(line) as JournalRecord<S>;
      } catch {
        rec = null as unknown as JournalRecord<S>;
      }
      if (!rec || typeof rec !== 'object') {
        throw new SessyncError('corrupt', `sync journal ${path} has a damaged line ${i + 1}; move it away (the next sync re-sends what the server lacks, without duplicates)`);
      }
      if ('journal' in rec) id ??= typeof rec.journal === 'string' ? rec.journal : null;
      else if ('forget' in rec) out.set(rec.forget, null);
      else if (rec.state && typeof rec.state.session === 'string') out.set(rec.state.session, rec.state);
    }
    return { states: out, id };
  }

  static remove(path: string): Promise<void> {
    return rm(path, { force: true });
  }
}
