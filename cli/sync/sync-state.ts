// Sync state beside the session files (never inside them): host id, per-session offsets, seqs, cursors, pending batches.
import { readFile, rm } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { toNullRecord } from '../../shared/own-keys.js';
import { writeFileAtomic } from '../store/atomic-json.js';
import { fsyncPath } from '../store/session-writer.js';
import { StateJournal, type JournalReplay } from './state-journal.js';
import { StatePack, packLine } from './state-pack.js';
import { killPoint } from './kill-point.js';
import { hostId as hostIdIn } from './host-id.js';
import { readStateJson } from './read-state-json.js';
import { bodyFileOf, type PendingBatch, type SessionSyncState } from './session-sync-state.js';

/**
 * A journal of at most this many sessions (a single-session pull, a push of two) is compacted into their own files:
 * no more fsyncs than the pack's (its file and its folder), and the other sessions' states are not rewritten.
 */
const OWN_FILES_AT_MOST = 2;

/**
 * A session's own file saying its state was forgotten while the pack still holds it: the file wins over the pack,
 * and the next compaction drops both (forgetting one session does not rewrite every session's state).
 */
interface ForgottenMark {
  session: string;
  forgotten: true;
}

function isForgotten(s: SessionSyncState | ForgottenMark): s is ForgottenMark {
  return (s as ForgottenMark).forgotten === true;
}

function hasFields(s: SessionSyncState): boolean {
  return typeof s.pushedOffset === 'number' && typeof s.nextSeq === 'number' && typeof s.path === 'string';
}

/** What a caller gets: skipIds always there, and a null-prototype cursor (host ids are user input). */
function normalized(s: SessionSyncState): SessionSyncState {
  return { ...s, skipIds: s.skipIds ?? [], cursor: toNullRecord(s.cursor) };
}

/** Sessions with a state file in `dir` (none when it does not exist yet). */
function stateFileNames(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5));
}

/** All sync state of one SESSYNC_HOME: machine-wide parts in sync/, per-server parts in sync/servers/<key>/. */
export class SyncState {
  /** Machine-wide: host id, project map, the run lock. */
  readonly dir: string;
  /** Per server identity: session offsets, seqs, cursors, pending batches, conflicts, remote meta cache. */
  readonly serverDir: string;

  /** Open while a run pushes many sessions: saves are gathered there and made durable once per request. */
  private journal: StateJournal<SessionSyncState> | null = null;
  /**
   * While the journal is open: the sessions that had a state file of their own when it opened. Until it closes,
   * states go to the journal and no such file is made, so a session not named here has none, and its load reads the
   * pack only (a first push of a thousand sessions asks for a thousand files that are not there).
   */
  private files: ReadonlySet<string> | null = null;
  /**
   * The pack (states compacted at the end of a run), read once per instance: a run that loads each of a thousand
   * sessions reads and splits it once. Read again by `recover`, which every run calls under the lock before it acts.
   */
  private packRead: Promise<StatePack<SessionSyncState> | null> | undefined;

  constructor(home: string, server: string) {
    this.dir = join(home, 'sync');
    this.serverDir = join(this.dir, 'servers', server);
  }

  private journalPath(): string {
    return join(this.serverDir, 'push-journal.jsonl');
  }

  /** Every session's state as of the last compaction; a session's own file, when it has one, is newer. */
  packPath(): string {
    return join(this.serverDir, 'state-pack.jsonl');
  }

  private pack(): Promise<StatePack<SessionSyncState> | null> {
    return (this.packRead ??= StatePack.read<SessionSyncState>(this.packPath()));
  }

  /**
   * From here until `closeJournal`, `save` keeps states in memory and `flushJournal` (called before each request
   * that carries batches) makes them durable together: one fsync per request, however many sessions it carries.
   */
  openJournal(): void {
    if (this.journal) return;
    this.journal = new StateJournal(this.journalPath());
    this.files = new Set(stateFileNames(join(this.serverDir, 'sessions')));
  }

  /** One durable write of every state saved since the last flush (nothing when no journal is open). */
  flushJournal(): Promise<void> {
    return this.journal ? this.journal.flush() : Promise.resolve();
  }

  /** Fsyncs made by the open journal (0 when none). */
  journalFsyncs(): number {
    return this.journal?.fsyncs ?? 0;
  }

  /**
   * For a new session file's folder: while the journal is open, its fsync is left to the journal's next flush (made
   * before the flush's own write, so no cursor is durable before the file it covers can be found). False when no
   * journal is open: the caller fsyncs the folder itself, before its state is saved.
   */
  readonly deferFolderSync = (dir: string): boolean => {
    if (!this.journal) return false;
    this.journal.needsFolderSync(dir);
    return true;
  };

  /** Compaction: the run's states into the pack (one durable write) or a few own files, then the journal is removed. */
  async closeJournal(): Promise<void> {
    const j = this.journal;
    if (!j) return;
    this.journal = null;
    this.files = null;
    await j.close();
    if (j.latest.size > 0) await this.writeOut(j.latest, j.id);
    await StateJournal.remove(j.path);
  }

  /**
   * Under the sync lock, before anything reads state to act on it: a journal left by a killed run holds states
   * newer than the pack and the files; they are written out (see closeJournal), then the journal goes.
   */
  async recover(): Promise<void> {
    this.packRead = undefined; // another process may have compacted since this instance read it (it held no lock then)
    const found = await StateJournal.replay<SessionSyncState>(this.journalPath());
    if (!found) return;
    await this.writeOut(await this.newerThanPack(found), found.id);
    await StateJournal.remove(this.journalPath());
  }

  /**
   * A journal's states made durable outside it: a few to their sessions' own files (each durable; a kill between
   * leaves the journal, which the next recover replays over them), more into the pack.
   */
  private async writeOut(newer: ReadonlyMap<string, SessionSyncState | null>, journal: string | null): Promise<void> {
    if (newer.size > OWN_FILES_AT_MOST) return this.compact(newer, journal);
    await Promise.all(
      [...newer].map(async ([session, s]) => {
        if (s) await writeFileAtomic(this.sessionPath(session), JSON.stringify(s) + '\n');
        else await this.dropStored(session);
        killPoint('compacted-one');
      }),
    );
  }

  /** The session's stored state gone: its own file removed, or, while the pack holds a line of it, a mark put there. */
  private async dropStored(session: string): Promise<void> {
    // The mark hides the line until the next compaction drops both. A pack that cannot be read gets the mark all the
    // same (harmless where it has no line).
    const inPack = await this.pack().then((p) => p?.has(session) ?? false, () => true);
    if (inPack) await writeFileAtomic(this.sessionPath(session), JSON.stringify({ session, forgotten: true } satisfies ForgottenMark) + '\n');
    else await rm(this.sessionPath(session), { force: true });
  }

  /**
   * A killed run's journal states, as they stand over the pack. When the pack was written by that journal's own
   * compaction (the kill came before the journal was removed), the pack's states of its sessions are the newer: they
   * hold the acknowledgements no flush wrote to the journal, so nothing acknowledged is sent again.
   */
  private async newerThanPack(found: JournalReplay<SessionSyncState>): Promise<Map<string, SessionSyncState | null>> {
    const pack = await this.pack();
    if (!pack || found.id === null || pack.journal !== found.id) return found.states;
    const out = new Map<string, SessionSyncState | null>();
    for (const [session, s] of found.states) {
      let packed: SessionSyncState | null = s; // a line damaged since: the journal's record of it stands
      try {
        packed = pack.get(session);
      } catch (e) {
        if (!isSessyncError(e, 'corrupt')) throw e;
      }
      out.set(session, packed);
    }
    return out;
  }

  /**
   * The end of a run in one durable write: the pack rewritten with `newer` over the sessions' own files over the old
   * pack, then the files folded in are removed (a crash before that leaves in both what the pack says, or a file the
   * journal's newer record covers at the next recover). A file that cannot be read stays: it still wins over the
   * pack, and its load reports it. Pack lines nothing replaces are carried as they are, a damaged one too.
   */
  private async compact(newer: ReadonlyMap<string, SessionSyncState | null>, journal: string | null): Promise<void> {
    const old = await this.pack();
    const lines = new Map(old?.lines ?? []);
    const sessionsDir = join(this.serverDir, 'sessions');
    const superseded: string[] = [];
    const folded: string[] = [];
    for (const n of stateFileNames(sessionsDir)) {
      if (newer.has(n)) {
        superseded.push(n);
        continue;
      }
      let own: SessionSyncState | ForgottenMark | null;
      try {
        own = await readStateJson<SessionSyncState | ForgottenMark>(this.sessionPath(n));
      } catch (e) {
        if (isSessyncError(e, 'corrupt')) continue;
        throw e;
      }
      if (!own || typeof own !== 'object') continue;
      if (isForgotten(own)) lines.delete(n);
      else if (hasFields(own)) lines.set(n, packLine(n, own));
      else continue;
      folded.push(n);
    }
    for (const [n, s] of newer) {
      if (s) lines.set(n, packLine(n, s));
      else lines.delete(n);
    }
    this.packRead = undefined;
    await StatePack.write(this.packPath(), lines.values(), journal);
    this.packRead = Promise.resolve(StatePack.of<SessionSyncState>(this.packPath(), lines, journal));
    for (const n of superseded) await rm(this.sessionPath(n), { force: true });
    for (const n of folded) await rm(this.sessionPath(n), { force: true });
    // An older state's file back after a power cut would win over the pack: its removal is durable before the journal's.
    if (superseded.length > 0) await fsyncPath(sessionsDir);
    killPoint('pack-folded');
  }

  private sessionPath(session: string): string {
    return join(this.serverDir, 'sessions', `${session}.json`);
  }

  pendingBodyPath(session: string, seq: number): string {
    return join(this.serverDir, 'pending', `${session}.${seq}.jsonl`);
  }

  conflictsPath(session: string): string {
    return join(this.serverDir, 'conflicts', `${session}.jsonl`);
  }

  lockTarget(): string {
    return join(this.dir, 'run');
  }

  /** This machine's host id (see host-id.ts): made once per copy of SESSYNC_HOME, its state re-keyed in a copy. */
  hostId(note?: (text: string) => void): Promise<string> {
    return hostIdIn(this, (server) => new SyncState(dirname(this.dir), server), note);
  }

  async load(session: string): Promise<SessionSyncState | null> {
    const j = this.journal?.latest;
    const s = j?.has(session) ? j.get(session)! : await this.stored(session, this.files ? this.files.has(session) : undefined);
    return s ? normalized(s) : null;
  }

  /**
   * The state as it is stored: the session's own file when it has one (written after the last compaction, so newer),
   * else its line in the pack. `hasFile` undefined: not known, the file is looked for.
   */
  private async stored(session: string, hasFile: boolean | undefined): Promise<SessionSyncState | null> {
    if (hasFile !== false) {
      const own = await readStateJson<SessionSyncState | ForgottenMark>(this.sessionPath(session));
      if (own && typeof own === 'object') {
        if (isForgotten(own)) return null;
        if (!hasFields(own)) throw new SessyncError('corrupt', `sync state of session ${session} lacks fields; move ${this.sessionPath(session)} away to rebuild it`);
        return own;
      }
    }
    const pack = await this.pack();
    const s = pack?.get(session) ?? null;
    if (s && !hasFields(s)) throw new SessyncError('corrupt', `sync state of session ${session} in ${pack!.path} lacks fields; delete its line to rebuild it`);
    return s;
  }

  async save(s: SessionSyncState): Promise<void> {
    // A copy: the caller may go on changing its object, and the journal writes what was saved.
    if (this.journal) this.journal.set(s.session, { ...s });
    else await writeFileAtomic(this.sessionPath(s.session), JSON.stringify(s) + '\n');
  }

  /** Every session with state, keyed by id. */
  async all(): Promise<Map<string, SessionSyncState>> {
    // Newer than the files and the pack: the open journal's states, or (read only, for a reader without the lock) a
    // killed run's.
    const found = this.journal ? null : await StateJournal.replay<SessionSyncState>(this.journalPath());
    const newer = this.journal?.latest ?? (found ? await this.newerThanPack(found) : null);
    const files = new Set(stateFileNames(join(this.serverDir, 'sessions')));
    const pack = await this.pack();
    const out = new Map<string, SessionSyncState>();
    for (const session of new Set([...files, ...(pack?.lines.keys() ?? [])])) {
      if (newer?.has(session)) continue;
      const s = await this.stored(session, files.has(session));
      if (s) out.set(session, normalized(s));
    }
    for (const [session, s] of newer ?? []) if (s) out.set(session, normalized(s));
    return out;
  }

  /** Drops the session's state and pending body (the session was removed here). */
  async forget(session: string): Promise<void> {
    // A corrupt state is forgotten all the same (that is the point); only its pending body may then stay behind.
    const st = await this.load(session).catch(() => null);
    if (this.journal) {
      // Durable at once (rare): a journal record of the session left behind would bring the state back. The pack's
      // line of it goes at the compaction.
      this.journal.set(session, null);
      await this.journal.flush();
      await rm(this.sessionPath(session), { force: true });
    } else {
      await this.recover(); // a killed run's record of it would bring it back too
      await this.dropStored(session);
    }
    if (st && bodyFileOf(st.pending)) await this.dropPendingBody(session, st.pending.seq);
  }

  async writePendingBody(session: string, seq: number, body: string | Uint8Array): Promise<void> {
    await writeFileAtomic(this.pendingBodyPath(session, seq), body);
  }

  /** The pending batch's body as it is sent: raw sealed bytes (`raw`), else its text; null when its file is gone. */
  async pendingBody(session: string, p: PendingBatch): Promise<string | Uint8Array | null> {
    if (p.raw) {
      if (p.body !== undefined) return Buffer.from(p.body, 'base64');
      try {
        return await readFile(this.pendingBodyPath(session, p.seq));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw e;
      }
    }
    return p.body ?? (await this.readPendingBody(session, p.seq));
  }

  async readPendingBody(session: string, seq: number): Promise<string | null> {
    try {
      return await readFile(this.pendingBodyPath(session, seq), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  async dropPendingBody(session: string, seq: number): Promise<void> {
    await rm(this.pendingBodyPath(session, seq), { force: true });
  }

  /** projectKey -> local project path on this machine. */
  async projectMap(): Promise<Record<string, string>> {
    return toNullRecord(await readStateJson<Record<string, string>>(join(this.dir, 'projects.json')));
  }

  async saveProjectMap(m: Record<string, string>): Promise<void> {
    await writeFileAtomic(join(this.dir, 'projects.json'), JSON.stringify(m, null, 2) + '\n');
  }

  /** Cache of remote sessions' project keys and headers (immutable once pushed): spares a request per sync. */
  async remoteMeta(): Promise<Record<string, { projectKey: string; cwd?: string; name?: string; timestamp?: string; agent?: string }>> {
    const path = join(this.serverDir, 'remote-meta.json');
    try {
      return toNullRecord(await readStateJson(path));
    } catch (e) {
      // A cache of the server's metas (project keys), written without an fsync: damaged by a crash, it is rebuilt by
      // asking the server again; nothing of the user's is in it.
      if (isSessyncError(e, 'corrupt')) return toNullRecord(null);
      throw e;
    }
  }

  async saveRemoteMeta(m: Record<string, { projectKey: string; cwd?: string; name?: string; timestamp?: string; agent?: string }>): Promise<void> {
    // Not made durable: a cache (see remoteMeta), so a pull's metas request costs no fsync of client state.
    await writeFileAtomic(join(this.serverDir, 'remote-meta.json'), JSON.stringify(m) + '\n', { durable: false });
  }
}
