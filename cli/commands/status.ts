// `sessync status`: per session, what is not yet pushed and what waits on the server.
import type { Command } from '../command.js';
import { sessionsRoot } from '../store/paths.js';
import { scopeOf } from '../sync/run-command.js';
import { syncStatus } from '../sync/sync-status.js';
import { ApiClient } from '../api-client.js';

const command: Command = {
  summary: 'Show, per session, entries not yet pushed and batches waiting on the server (local figures work offline).',
  usage: '[<ref> | --all]',
  options: { all: { type: 'boolean', default: false } },
  async run(ctx) {
    const r = await syncStatus({ ...scopeOf(ctx, 'status'), cwd: ctx.cwd, env: ctx.env, root: sessionsRoot(ctx.env) });
    const lines: string[] = [];
    lines.push(r.server ? `server: ${r.server}${r.serverError ? ` (${r.serverError.message})` : ''}` : 'server: not logged in (run `sessync login <url> --token <token>`)');
    for (const s of r.sessions) {
      const push = s.pendingBatch ? `${s.unpushedEntries} to push + 1 batch unacknowledged` : `${s.unpushedEntries} to push`;
      const pull = s.waitingBatches === null ? 'server unknown' : s.remoteOnly ? `only on the server (${s.waitingBatches} batches)` : `${s.waitingBatches} batch${s.waitingBatches === 1 ? '' : 'es'} to pull`;
      const behind = s.serverBehind ? '; the server has fewer of my batches than I think (the next sync pushes it again)' : '';
      const damaged = s.damaged?.length ? `; ${s.damaged.length} damaged stored batch(es) or line(s) passed over (status --json lists them)` : '';
      lines.push(`${s.session}  ${push}, ${pull}${behind}${damaged}${s.name ? `  ${s.name}` : ''}`);
    }
    for (const f of r.skippedFiles) lines.push(`skipped ${f.path}: ${f.reason}`);
    for (const h of r.ignoredHeads ?? []) lines.push(ApiClient.ignoredHeadNote(h));
    const toPush = r.sessions.filter((s) => s.unpushedEntries > 0 || s.pendingBatch || s.serverBehind).length;
    const toPull = r.sessions.filter((s) => (s.waitingBatches ?? 0) > 0).length;
    lines.push(`${r.sessions.length} session(s): ${toPush} with entries to push, ${r.serverError ? 'server not checked' : `${toPull} with entries to pull`}`);
    ctx.print(lines.join('\n'), r);
  },
};
export default command;
