// `sessync sync`: push then pull; with --watch keeps doing it until Ctrl-C.
import type { Command } from '../command.js';
import { chosenAgents, runAgents } from '../agents/agent-run.js';
import { syncCommand, mapsOf, scopeOf } from '../sync/run-command.js';
import { watchSignals } from '../sync/interrupt.js';
import { WATCH_PULL_MS, WATCH_PUSH_MS, watchCadence, watchSync } from '../sync/watch.js';

const once = syncCommand('sync', 'Push new local entries, then pull remote ones, for this project (or <ref>, or --all).');

const command: Command = {
  ...once,
  usage: '[<ref> | --all] [--map KEY=PATH]... [--agent pi|claude-code|codex|all] [--apply-deletes] [--watch]',
  help: `${once.help}\n--watch: keeps syncing: ${watchCadence()}; keeps going while the server is away; stops on Ctrl-C (SIGINT) or SIGTERM (exit 130 / 143, its round under way saved).`,
  options: { ...once.options, watch: { type: 'boolean', default: false } },
  async run(ctx) {
    if (ctx.opts.watch !== true) return once.run(ctx);
    const agents = await chosenAgents(ctx.opts.agent, ctx.env);
    // Ctrl-C / SIGTERM: the round under way stops before its next request, and the command exits 130 / 143.
    const interrupt = watchSignals();
    try {
      return await watchSync({
        ...scopeOf(ctx, 'sync'),
        cwd: ctx.cwd,
        env: ctx.env,
        maps: mapsOf(ctx),
        interrupt,
        run: (o) => runAgents(agents, o),
        pushEveryMs: Number(ctx.env.SESSYNC_WATCH_PUSH_MS) || WATCH_PUSH_MS,
        pullEveryMs: Number(ctx.env.SESSYNC_WATCH_PULL_MS) || WATCH_PULL_MS,
        report: (line, value) => {
          // One line per event: JSON lines with --json (a stream), text otherwise.
          if (ctx.json) process.stdout.write(JSON.stringify({ ...value, message: line }) + '\n');
          else process.stdout.write(line + '\n');
        },
      });
    } finally {
      interrupt.dispose();
    }
  },
};
export default command;
