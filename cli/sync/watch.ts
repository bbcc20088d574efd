// `sessync sync --watch`: checks for appended entries every half second and pushes them, pulls every 3 s, rides out outages.
import { isSessyncError, SessyncError } from '../../shared/errors.js';
import { ApiClient } from '../api-client.js';
import { requireLogin } from '../login-store.js';
import { runSync, type RunOptions, type RunSummary } from './sync-run.js';
import { takeCacheNotes } from '../store/cache-save.js';
import { waitingPart } from './run-command.js';
import type { Interrupt } from './interrupt.js';

export interface WatchOptions {
  ref?: string;
  all?: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  maps?: Record<string, string>;
  /** How often local files are checked for growth (a stat per session; no request when nothing grew). */
  pushEveryMs?: number;
  /** How often the server is asked for changes. */
  pullEveryMs?: number;
  /** Ctrl-C / SIGTERM: a round under way stops before its next request (its state saved), then the watcher ends. */
  interrupt: Interrupt;
  /** State changes and moved entries, one line each. */
  report: (line: string, value: Record<string, unknown>) => void;
  api?: ApiClient;
  /** One sync run (default runSync): the command passes one that runs each chosen agent's sessions. */
  run?: (o: RunOptions) => Promise<RunSummary>;
}

/** Defaults of the two periods; SESSYNC_WATCH_PUSH_MS / SESSYNC_WATCH_PULL_MS change them. */
export const WATCH_PUSH_MS = 500;
export const WATCH_PULL_MS = 3_000;

/** The one sentence that says how fast a watcher moves entries: help, README and the watcher itself use it. */
export function watchCadence(pushMs = WATCH_PUSH_MS, pullMs = WATCH_PULL_MS): string {
  return `checks for new entries every ${pushMs / 1000} s and pushes them at once; pulls every ${pullMs / 1000} s`;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

function moved(s: RunSummary): boolean {
  return s.pushedEntries + s.pulledEntries + s.createdSessions + s.conflicts > 0;
}

/** Sessions whose pulled lines wait in a mirror, as one comparable string: said when the set changes, not every cycle. */
function waitingKey(s: RunSummary): string {
  return (s.exportWaiting ?? []).map((w) => `${w.agent}:${w.session}:${w.why}`).sort().join(',');
}

/** Failed sessions as one comparable string: a watcher reports a failure when it starts or changes, not every cycle. */
function failureKey(s: RunSummary): string {
  return s.sessions.filter((x) => x.error).map((x) => `${x.session}:${x.error!.code}`).sort().join(',');
}

/**
 * Runs until Ctrl-C or SIGTERM, then throws `interrupted` (exit 130 / 143, as push, pull and sync) once the round
 * under way has stopped with its state saved; the number of rounds that failed is in the `stop` event.
 */
export async function watchSync(o: WatchOptions): Promise<never> {
  const stopped = o.interrupt.stopped;
  const pushEvery = o.pushEveryMs ?? WATCH_PUSH_MS;
  const pullEvery = o.pullEveryMs ?? WATCH_PULL_MS;
  let api = o.api;
  if (!api) {
    const login = await requireLogin(o.env);
    // One quick retry per call: the loop below does the long backoff, and keeps checking local files meanwhile.
    api = ApiClient.forLogin(login, { retries: 1, baseDelayMs: 200 });
  }
  let lastPull = 0;
  let online: boolean | null = null;
  let backoff = 0;
  let failures = 0;
  let lastFailed = '';
  let lastWaiting = '';
  o.report(`watching ${o.ref ?? (o.all ? 'every session' : 'this project')}: ${watchCadence(pushEvery, pullEvery)}; Ctrl-C stops`, { event: 'start' });
  while (!stopped.aborted) {
    const pullDue = Date.now() - lastPull >= pullEvery;
    const started = Date.now();
    try {
      const s = await (o.run ?? runSync)({
        mode: pullDue ? 'sync' : 'push',
        ...(o.ref ? { ref: o.ref } : {}),
        all: o.all ?? false,
        cwd: o.cwd,
        env: o.env,
        ...(o.maps ? { maps: o.maps } : {}),
        api,
        interrupt: o.interrupt,
        noteErrors: false,
        note: (t) => o.report(t, { event: 'note' }),
      });
      if (pullDue) lastPull = started;
      if (online !== true && (online === false || s.requests > 0)) {
        if (online === false) o.report('server reachable again; catching up', { event: 'online' });
        online = true;
      }
      backoff = 0;
      const failed = failureKey(s);
      if (failed !== lastFailed) {
        // Per-session errors (a file locked by its writer, a corrupt batch): the other sessions keep syncing.
        for (const x of s.sessions) if (x.error) o.report(`session ${x.session}: ${x.error.message}`, { event: 'session-error', session: x.session, code: x.error.code });
        lastFailed = failed;
      }
      // A cache this cycle could not save (a full disk), said once per kind, not only when the watcher stops.
      for (const n of takeCacheNotes()) o.report(n, { event: 'note' });
      // Pulled lines that wait in a mirror (the agent mid-line in its file) are said with the figures, else "pulled 3"
      // reads as in the agent's files; and when the wait starts, changes or ends, though no entry moved then.
      const waiting = waitingKey(s);
      if (moved(s) || waiting !== lastWaiting) {
        const wait = waitingPart(s.exportWaiting ?? []);
        const done = wait === '' && lastWaiting !== '' ? ', no pulled lines wait for the agent\'s files any more' : '';
        const line = `${new Date().toISOString()} pushed ${s.pushedEntries}, pulled ${s.pulledEntries}${s.createdSessions ? `, ${s.createdSessions} new session(s)` : ''}${s.conflicts ? `, ${s.conflicts} conflict(s) kept aside` : ''}${wait ? `, ${wait}` : done}`;
        o.report(line, { event: 'synced', ...s });
      }
      lastWaiting = waiting;
    } catch (e) {
      // Stopped by the signal before a request: the run's finally blocks saved its state; the loop ends below.
      if (isSessyncError(e, 'interrupted')) break;
      failures++;
      const retryable = isSessyncError(e) && (e.retryable || e.code === 'locked');
      const msg = isSessyncError(e) ? e.message : String((e as Error)?.message ?? e);
      if (!retryable && !(isSessyncError(e) && e.code === 'internal')) {
        // A refused token or a wrong server will not fix itself; a watcher still keeps trying, but says so loudly.
        o.report(`error: ${msg}`, { event: 'error', code: isSessyncError(e) ? e.code : 'internal' });
      } else if (online !== false) {
        o.report(`server unreachable (${msg}); will keep trying`, { event: 'offline' });
      }
      online = false;
      backoff = Math.min(backoff ? backoff * 2 : 1_000, 15_000);
      await sleep(backoff / 2 + Math.random() * (backoff / 2), stopped);
      continue;
    }
    await sleep(Math.max(0, pushEvery - (Date.now() - started)), stopped);
  }
  o.report('stopped', { event: 'stop', failedRounds: failures, signal: o.interrupt.signal });
  // Only a signal ends the loop, so there is one. Exit 130 / 143 as for any sync stopped by a signal, but said as what
  // it is: a watcher has nothing left to finish, and a retry would only start it again.
  const signal = o.interrupt.signal ?? 'SIGINT';
  throw new SessyncError('interrupted', `sync --watch stopped (${signal}); the last round's state is saved`, { retryable: false, details: { signal } });
}
