// CLI entry: parses common options, dispatches to cli/commands/<name>.ts, turns errors into exit codes.
import { parseArgs } from 'node:util';
import { commands } from 'sessync:commands';
import type { Command, CommandContext, OptionSpec } from './command.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { toJsonText } from '../shared/json-stringify.js';

const COMMON: OptionSpec = {
  json: { type: 'boolean', default: false },
  cwd: { type: 'string' },
  'sessions-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
};

const EXIT_USAGE = 2;

async function topHelp(): Promise<string> {
  const names = Object.keys(commands).sort();
  const loaded = await Promise.all(names.map(async (n) => [n, (await commands[n]!()).default.summary] as const));
  const width = Math.max(...names.map((n) => n.length));
  return [
    'sessync: keeps coding-agent session logs correct on disk and syncs them between machines.',
    '',
    'Usage: sessync <command> [args] [--json] [--cwd DIR] [--sessions-dir DIR]',
    '',
    'Commands:',
    ...loaded.map(([n, summary]) => `  ${n.padEnd(width)}  ${summary}`),
    '',
    'Run `sessync <command> --help` for a command\'s usage.',
  ].join('\n');
}

function commandHelp(name: string, cmd: Command): string {
  return [`Usage: sessync ${name} ${cmd.usage}`, '', cmd.summary, ...(cmd.help ? ['', cmd.help] : []), '', 'Every command takes --json, --cwd DIR and --sessions-dir DIR.'].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  // `sessync log | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write((await topHelp()) + '\n');
    return name ? 0 : EXIT_USAGE;
  }
  if (name === '--version') {
    process.stdout.write('sessync 0.1.0\n');
    return 0;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined; // `sessync constructor` is unknown, not Object's
  const wantsJson = rest.includes('--json');
  if (!load) {
    return fail(new SessyncError('bad_input', `unknown command "${name}". Run \`sessync --help\` for the list.`), wantsJson, EXIT_USAGE);
  }
  const cmd = (await load()).default;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: { ...COMMON, ...(cmd.options ?? {}) }, allowPositionals: true, strict: true });
  } catch (e) {
    return fail(new SessyncError('bad_input', `${(e as Error).message}\nUsage: sessync ${name} ${cmd.usage}`), wantsJson, EXIT_USAGE);
  }
  const opts = parsed.values as CommandContext['opts'];
  if (opts.help) {
    process.stdout.write(commandHelp(name, cmd) + '\n');
    return 0;
  }
  const json = opts.json === true;
  if (typeof opts['sessions-dir'] === 'string') process.env.SESSYNC_SESSIONS_DIR = opts['sessions-dir'];
  const ctx: CommandContext = {
    args: parsed.positionals,
    opts,
    json,
    cwd: typeof opts.cwd === 'string' ? opts.cwd : process.cwd(),
    env: process.env,
    stdin: process.stdin,
    print(human, value) {
      if (json) process.stdout.write(toJsonText(value ?? null) + '\n'); // entries of any depth (log, context --json)
      else if (human) process.stdout.write(human.endsWith('\n') ? human : human + '\n');
    },
    info(text) {
      if (!json) process.stderr.write(text.endsWith('\n') ? text : text + '\n');
    },
  };
  try {
    return (await cmd.run(ctx)) ?? 0;
  } catch (e) {
    return fail(e, json);
  }
}

function fail(e: unknown, json: boolean, exitCode?: number): number {
  const err = isSessyncError(e) ? e : new SessyncError('internal', `unexpected error: ${(e as Error)?.stack ?? String(e)}`);
  if (json) process.stderr.write(JSON.stringify({ error: err.toJSON() }) + '\n');
  else process.stderr.write(`sessync: ${err.message}${err.retryable ? ' (retrying may help)' : ''}\n`);
  return exitCode ?? (err.code === 'ambiguous' || err.code === 'bad_input' ? EXIT_USAGE : 1);
}
