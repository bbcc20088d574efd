// Crash points for the kill -9 tests: $SESSYNC_KILL_POINT=name:n makes the process SIGKILL itself the n-th time it passes `name`
// ($SESSYNC_KILL_SIGNAL: another signal, such as SIGINT for the Ctrl-C tests).
const want = /^([a-z-]+):(\d+)$/.exec(process.env.SESSYNC_KILL_POINT ?? '');
let passed = 0;

/**
 * A named moment between two durable steps (a journal written but not fsynced, fsynced but the request not sent,
 * half compacted). Unset, it costs one comparison; the tests use it to land a kill exactly there, every time.
 */
export function killPoint(name: string): void {
  if (!want || want[1] !== name || ++passed !== Number(want[2])) return;
  // $SESSYNC_KILL_SIGNAL_TIMES=2: the signal twice in a row (a user's double Ctrl-C).
  const times = Math.max(1, Number(process.env.SESSYNC_KILL_SIGNAL_TIMES) || 1);
  for (let i = 0; i < times; i++) process.kill(process.pid, (process.env.SESSYNC_KILL_SIGNAL as NodeJS.Signals | undefined) || 'SIGKILL');
}
