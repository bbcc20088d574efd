// The mirror -> Codex rollouts: pulled lines are appended byte-exact; a continuation that cannot share the rollout
// becomes a fork rollout (shared/codex-fork.ts), and this machine's own such continuation is moved into its fork.
import { stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { codex, entryOverLimit, isCodexSessionId } from '../../shared/agents/codex.js';
import { LIMITS } from '../../shared/wire.js';
import { forkRolloutLines, planForks, undecidedLines, type Arrival, type ForkLine, type PlannedFork } from '../../shared/codex-fork.js';
import { readSession } from '../store/session-reader.js';
import { fsError } from '../fs-error.js';
import { listSessions } from '../store/session-index.js';
import { appendLines, TORN_WAY_OUT } from './claude-export.js';
import { arrivalsFor } from './codex-arrivals.js';
import { findRollouts } from './codex-files.js';
import { codexHolders } from './codex-holders.js';
import { fixCodexIndex } from './codex-index.js';
import { readRollout } from './codex-mirror-import.js';
import { codexBackupPath, moveIntoForks, writeWholeFile } from './codex-move.js';
import { codexIndexPath, codexMirrorRoot, codexSessionsRoot } from './codex-paths.js';
import type { CodexState } from './codex-state.js';
import type { ExportWait } from '../sync/sync-run.js';

export interface CodexForkMade {
  fork: string;
  from: string;
  reason: string;
  /** This machine's own continuation moved into the fork. */
  mine: boolean;
}

export interface CodexExportResult {
  lines: number;
  created: number;
  forks: CodexForkMade[];
  /** Sessions whose pulled lines wait in the mirror for the next sync, and why: the summary says so after `pulled`. */
  waiting: { session: string; why: ExportWait }[];
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function why(f: PlannedFork, from: string): string {
  switch (f.reason) {
    case 'local-later':
      return `this machine continued session ${from} after another machine's continuation reached the server first`;
    case 'remote-later':
      return `another machine continued session ${from} after this machine's continuation had reached the server`;
    case 'recorded':
      return `a machine already made this continuation of ${from} the fork`;
    case 'first-received':
      return `two continuations of ${from} reached the server from other machines; the one the server received first keeps the session`;
    default:
      return `two continuations of ${from} reached the server from other machines; the earlier one keeps the session`;
  }
}

const text = (lines: string[]) => lines.map((l) => `${l}\n`).join('');

/**
 * Brings each given mirror's lines into its Codex rollout. A rollout Codex is writing (a last line without '\n') or
 * holding open is left alone and reported; the next sync does it. `ask` gets the server's arrivals of a session's lines
 * (codex-arrivals.ts) when continuations need ordering (without it: the rule of a server that cannot say); should the
 * server not answer, no fork is decided by a guess: the mirror waits for the next sync.
 */
export async function exportCodexMirror(
  env: NodeJS.ProcessEnv,
  state: CodexState,
  mirrors: string[],
  note: (t: string) => void,
  ask?: (session: string) => Promise<Map<string, Arrival>>,
): Promise<CodexExportResult> {
  const result: CodexExportResult = { lines: 0, created: 0, forks: [], waiting: [] };
  const root = codexSessionsRoot(env);
  /** Mirror -> why its lines wait for the next sync. */
  const pending = new Map<string, ExportWait>();
  const sessionOf = new Map(Object.entries(state.sessions).map(([session, s]) => [s.mirror, session]));
  const written: { session: string; path: string }[] = [];
  const rollouts = new Map((await findRollouts(root, () => undefined)).map((r) => [r.session, r.path]));
  const known = new Set<string>([...rollouts.keys(), ...Object.keys(state.sessions)]);
  for (const l of await listSessions({ root: codexMirrorRoot(env), all: true, env })) known.add(l.id);
  for (const mirror of new Set([...mirrors, ...state.pending])) {
    try {
      const m = await readSession(mirror);
      const session = m.header.id;
      sessionOf.set(mirror, session);
      const lines: ForkLine[] = [];
      for (const e of m.entries) {
        // A line too big to travel (mirrored by an older sessync) is in no line of work: the lines after it continue the one before.
        if (entryOverLimit(e, LIMITS.maxEntryBytes) !== null) continue;
        const back = codex.fromEntry(e);
        if (back) lines.push({ id: e.id, parentId: e.parentId, timestamp: e.timestamp, text: back.text });
      }
      if (lines.length === 0) continue;
      if (!isCodexSessionId(session)) {
        note(`${mirror}: session id "${session}" is not a uuid, which Codex needs in a rollout's name; not written out`);
        continue;
      }
      const rollout = rollouts.get(session) ?? join(root, codex.mainFile(session, String(m.header.timestamp)));
      const here = (await exists(rollout)) ? await readRollout(rollout, rollout.slice(root.length + 1), note) : null;
      if (here && here.tail !== '') {
        note(`${rollout}: its last line is still being written; the pulled lines go there on the next sync${TORN_WAY_OUT}`);
        pending.set(mirror, 'writing');
        continue;
      }
      const local = here ? here.lines.map((l) => l.id) : null;
      const undecided = undecidedLines({ session, lines, known });
      const arrivals = undecided.length > 0 && ask ? await arrivalsFor(state, session, undecided, ask) : undefined;
      const plan = planForks({ session, lines, local, synced: state.synced[session] ?? null, known, ...(arrivals ? { arrivals } : {}) });
      const byId = new Map(lines.map((l) => [l.id, l.text]));
      const textOf = (id: string) => byId.get(id)!;
      const forkFiles = plan.forks
        .filter((f) => !rollouts.has(f.id))
        .map((f) => ({ f, path: join(root, codex.mainFile(f.id, lines.find((l) => l.id === f.at)!.timestamp)), text: text(forkRolloutLines(session, f, textOf)) }));
      const keepText = text(plan.keep.map(textOf));
      const touched = [rollout, ...forkFiles.map((x) => x.path)];
      if (plan.moveLocal || forkFiles.length > 0) {
        const holders = await codexHolders([rollout, codexIndexPath(env)]);
        if (holders.length > 0) {
          const who = holders.includes(-1) ? 'sessync cannot check here whether Codex' : `Codex (pid ${holders.join(', ')})`;
          note(`${who} has ${rollout} or its index open; sessync makes the fork of session ${session} on the next sync after it exits`);
          pending.set(mirror, 'open');
          continue;
        }
      }
      if (plan.moveLocal && here) {
        // Every line of the rollout here must be in what it becomes or in a fork, or it is not touched at all.
        const kept = new Set([...plan.keep, ...plan.forks.flatMap((f) => f.path)]);
        const lost = here.lines.filter((l) => !kept.has(l.id));
        if (here.unreadable > 0) {
          note(`${rollout}: has ${here.unreadable} line(s) that do not sync (unreadable, or over the size limit), which a rewrite would drop; the fork of session ${session} is not made and the rollout is left as it is`);
          continue;
        }
        if (lost.length > 0) {
          note(`${rollout}: ${lost.length} line(s) (from line ${lost[0]!.line}) belong to no line of work sessync can name; the rollout is left as it is`);
          continue;
        }
        await moveIntoForks(env, session, rollout, keepText, forkFiles.map(({ path, text: t }) => ({ path, text: t })));
      } else if (here && plan.keep.slice(0, here.lines.length).some((id, i) => id !== here.lines[i]!.id)) {
        note(`${rollout}: does not start like the session's lines on the server; the rollout is left as it is`);
        continue;
      } else {
        for (const x of forkFiles) await writeWholeFile(x.path, x.text);
        if (!here) {
          await writeWholeFile(rollout, keepText);
          result.created++;
          result.lines += plan.keep.length;
        } else {
          const missing = plan.keep.slice(here.lines.length);
          if (missing.length > 0) await appendLines(rollout, missing.map(textOf));
          result.lines += missing.length;
        }
        // A move killed after its rewrite: its forks are durable now, so its backup goes.
        if (await exists(codexBackupPath(env, session))) await unlink(codexBackupPath(env, session));
      }
      for (const x of forkFiles) {
        rollouts.set(x.f.id, x.path);
        known.add(x.f.id);
        const mine = x.f.reason === 'local-later';
        const reason = why(x.f, session);
        state.forks[x.f.id] = { from: session, at: x.f.at, reason, when: new Date().toISOString() };
        result.forks.push({ fork: x.f.id, from: session, reason, mine });
        note(
          mine
            ? `Codex: your work on this machine in session ${session} continues as session ${x.f.id} (codex exec resume ${x.f.id}): ${reason}. Session ${session} now holds the server's continuation.`
            : `Codex: session ${session} was continued on two machines; the other continuation is now session ${x.f.id} (codex exec resume ${x.f.id}): ${reason}.`,
        );
      }
      written.push(...touched.map((p, i) => ({ session: i === 0 ? session : forkFiles[i - 1]!.f.id, path: p })));
      state.sessions[session] = { mirror, rollout };
      const ms = await stat(mirror);
      state.exported[mirror] = { size: ms.size, mtimeMs: ms.mtimeMs };
      rollouts.set(session, rollout);
      const last = plan.keep[plan.keep.length - 1];
      if (last !== undefined) state.lastLocal[session] = last;
    } catch (e) {
      note(`${mirror}: ${(fsError(e) as Error).message}; its Codex rollout is left as it is`);
      pending.set(mirror, 'failed');
    }
  }
  state.pending = [...pending.keys()];
  for (const [m, why] of pending) {
    const session = sessionOf.get(m);
    if (session !== undefined) result.waiting.push({ session, why });
  }
  // One look at Codex's index for every rollout written: a row naming another path for one of them goes.
  try {
    await fixCodexIndex(env, written, note);
  } catch (e) {
    // An index that cannot be read is left exactly as it is: the rollouts are written, only a stale row may remain.
    note(`Codex's index ${codexIndexPath(env)} could not be read (${(fsError(e) as Error).message}); it is left as it is. If \`codex exec resume\` cannot find a pulled session, move that file aside and Codex rebuilds it from sessions/`);
  }
  return result;
}
