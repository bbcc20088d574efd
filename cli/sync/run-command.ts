// The shared body of `sessync push`, `pull` and `sync`: options, the run, one summary line (or JSON).
import type { Command, CommandContext } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { parseMaps } from './project-key.js';
import { createProgress, formatBytes } from './progress.js';
import { type ExportWait, type RunSummary, type SyncMode } from './sync-run.js';
import { otherProjectsNote } from './other-projects.js';
import { AGENT_OPTION, chosenAgents, runAgents, whenPi } from '../agents/agent-run.js';
import { watchSignals } from './interrupt.js';

export const SCOPE_OPTIONS = {
  all: { type: 'boolean', default: false },
  map: { type: 'string', multiple: true },
  ...AGENT_OPTION,
} as const;

const UNDELETE_OPTION = { undelete: { type: 'boolean', default: false } } as const;
const APPLY_DELETES_OPTION = { 'apply-deletes': { type: 'boolean', default: false } } as const;

export function mapsOf(ctx: CommandContext): Record<string, string> {
  const v = ctx.opts.map;
  return parseMaps(Array.isArray(v) ? v : typeof v === 'string' ? [v] : []);
}

export function scopeOf(ctx: CommandContext, name: string): { ref?: string; all: boolean } {
  if (ctx.args.length > 1) throw new SessyncError('bad_input', `sessync ${name} takes at most one session reference`);
  const all = ctx.opts.all === true;
  if (all && ctx.args[0]) throw new SessyncError('bad_input', `give a session reference or --all, not both`);
  return { ...(ctx.args[0] ? { ref: ctx.args[0] } : {}), all };
}

const WAIT_SAID: Record<ExportWait, string> = { writing: 'a last line there is being written', open: 'the agent has a file open', failed: 'a write failed, see above' };

/**
 * Sessions whose pulled lines wait in sessync's mirror, in words (empty when none): the sync summary and the watcher's
 * line say it after the pulled figure, which alone would read as written into the agent's files. Each reason once.
 */
export function waitingPart(waiting: NonNullable<RunSummary['exportWaiting']>): string {
  if (waiting.length === 0) return '';
  const agents = [...new Set(waiting.map((w) => w.agent))].join(' and ');
  const whys = new Set(waiting.map((w) => w.why));
  const why = (Object.keys(WAIT_SAID) as ExportWait[]).filter((k) => whys.has(k)).map((k) => WAIT_SAID[k]).join(', or ');
  return `${waiting.length} session${waiting.length === 1 ? "'s" : "s'"} pulled lines not written into ${waiting.length === 1 ? 'its' : 'their'} ${agents} files yet (${why})`;
}

export function summaryLine(s: RunSummary): string {
  const parts: string[] = [];
  // No request made (a push with nothing to send): said, so it is not read as the server having been reached.
  if (s.requests === 0 && s.mode === 'push' && s.pushedEntries === 0) parts.push('nothing to push, so the server was not asked');
  else if (s.mode !== 'pull') parts.push(`pushed ${s.pushedEntries} entr${s.pushedEntries === 1 ? 'y' : 'ies'} (${formatBytes(s.pushedBytes)}) from ${s.pushedSessions} session${s.pushedSessions === 1 ? '' : 's'}`);
  if (s.mode !== 'push') {
    parts.push(`pulled ${s.pulledEntries} entr${s.pulledEntries === 1 ? 'y' : 'ies'} into ${s.pulledSessions} session${s.pulledSessions === 1 ? '' : 's'}${s.createdSessions ? ` (${s.createdSessions} new here)` : ''}`);
  }
  // Pulled into the mirror, not into the agent's own files: said, so "pulled" is not read as resumable there yet.
  const waiting = waitingPart(s.exportWaiting ?? []);
  if (waiting) parts.push(`${waiting}: the next sync writes them`);
  if (s.conflicts) parts.push(`${s.conflicts} conflicting entr${s.conflicts === 1 ? 'y' : 'ies'} kept aside`);
  if (s.damagedBatches) parts.push(`${s.damagedBatches} damaged stored batch${s.damagedBatches === 1 ? '' : 'es'} skipped`);
  if (s.skippedLines) parts.push(`${s.skippedLines} invalid line${s.skippedLines === 1 ? '' : 's'} skipped`);
  if (s.skippedFiles.length) parts.push(`${s.skippedFiles.length} unreadable session file${s.skippedFiles.length === 1 ? '' : 's'} skipped`);
  const kept = s.deleted.filter((d) => d.action === 'kept').length;
  const removed = s.deleted.filter((d) => d.action === 'removed').length;
  if (kept) parts.push(`${kept} session${kept === 1 ? '' : 's'} deleted on the server kept here, not pushed`);
  if (removed) parts.push(`${removed} session${removed === 1 ? '' : 's'} deleted on the server removed here`);
  for (const f of s.forks ?? []) parts.push(`Codex session ${f.from} forked: ${f.mine ? "this machine's" : "another machine's"} continuation is now session ${f.fork} (${f.reason})`);
  if (s.failed) parts.push(`${s.failed} session${s.failed === 1 ? '' : 's'} failed${s.pushHeld ? ` (${s.pushHeld} with ${s.pushHeld === 1 ? 'its' : 'their'} push held until an interrupted pull of ${s.pushHeld === 1 ? 'it' : 'them'} is redone)` : ''}`);
  return `${s.mode}: ${s.sessionsChecked} session${s.sessionsChecked === 1 ? '' : 's'} checked; ${parts.join('; ')}; ${s.requests} request${s.requests === 1 ? '' : 's'}`;
}

export function syncCommand(mode: SyncMode, summary: string): Command {
  return {
    summary,
    usage: `[<ref> | --all] [--map KEY=PATH]... [--agent pi|claude-code|codex|all] ${mode === 'push' ? '[--undelete]' : '[--apply-deletes]'}`,
    usesSessions: whenPi('needs'),
    help: [
      'Without a ref: the sessions of this project (--cwd), including ones only the server has (matched by project key:',
      'the git remote, else the root commit, else the path). --all: every session here and on the server.',
      '--map KEY=PATH files sessions of project KEY under PATH on this machine (remembered).',
      '--agent: whose sessions (default: pi, Claude Code when $CLAUDE_CONFIG_DIR or ~/.claude exists, Codex when $CODEX_HOME or ~/.codex does; $SESSYNC_AGENT sets another default).',
      mode === 'push'
        ? '--undelete: a session deleted on the server (by any machine) is put back, with this machine\'s whole file.'
        : '--apply-deletes: remove the local files of sessions deleted on the server (by default they are kept, and not pushed); a Claude Code or Codex file is the agent\'s and is never removed.',
    ].join('\n'),
    options: { ...SCOPE_OPTIONS, ...(mode === 'push' ? UNDELETE_OPTION : APPLY_DELETES_OPTION) },
    async run(ctx) {
      if (ctx.opts.undelete === true && !ctx.args[0]) throw new SessyncError('bad_input', 'usage: sessync push <ref> --undelete');
      const agents = await chosenAgents(ctx.opts.agent, ctx.env);
      // Ctrl-C / SIGTERM from here on: the run stops before its next request and the command exits 130 / 143.
      const interrupt = watchSignals();
      const summary = await runAgents(agents, {
        ...(ctx.opts.undelete === true ? { undelete: true } : {}),
        ...(ctx.opts['apply-deletes'] === true ? { applyDeletes: true } : {}),
        mode,
        ...scopeOf(ctx, mode),
        cwd: ctx.cwd,
        env: ctx.env,
        maps: mapsOf(ctx),
        progress: createProgress({ json: ctx.json }),
        note: (t) => ctx.info(t),
        wait: (t, d) => ctx.waiting(t, d),
        interrupt,
      }).finally(() => interrupt.dispose());
      // A run that reached the server and could not be answered throws (unavailable, exit 1); one that returns has
      // heard from it whenever it made a request. serverChecked as in `status --json`: false means "not asked".
      const out = { ...summary, serverChecked: summary.requests > 0 };
      const others = mode === 'push' ? null : otherProjectsNote(summary.otherProjects, mode);
      if (others) ctx.info(others); // stderr; --json has the figures in otherProjects
      ctx.print(summaryLine(out), out);
      return summary.failed ? 1 : 0;
    },
  };
}
