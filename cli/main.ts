// CLI entry: parses common options, dispatches to cli/commands/<name>.ts, turns errors into exit codes.
import { parseArgs } from 'node:util';
import { commands } from 'sessync:commands';
import type { Command, CommandContext, OptionSpec } from './command.js';
import { SessyncError, isSessyncError } from '../shared/errors.js';
import { fsError } from './fs-error.js';
import { interruptedExit } from './sync/interrupt.js';
import { toJsonText } from '../shared/json-stringify.js';
import { version } from '../package.json';
import { noteLine, setJsonNotes, takeCacheNotes } from './store/cache-save.js';
import { checkSessionsDir, checkSessionsDirValue } from './store/check-sessions-dir.js';

const COMMON: OptionSpec = {
  json: { type: 'boolean', default: false },
  cwd: { type: 'string' },
  'sessions-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
};

const EXIT_USAGE = 2;
const TOP_USAGE = 'Usage: sessync [--json] [--cwd DIR] [--sessions-dir DIR] <command> [args]';

function isCommonFlag(arg: string): boolean {
  const key = arg.startsWith('--') ? arg.slice(2).split('=')[0]! : arg === '-h' ? 'help' : '';
  return Object.hasOwn(COMMON, key); // `--constructor` is not a flag
}

async function topHelp(): Promise<string> {
  const names = Object.keys(commands).sort();
  const loaded = await Promise.all(names.map(async (n) => [n, (await commands[n]!()).default.summary] as const));
  const width = Math.max(...names.map((n) => n.length));
  return [
    'sessync: keeps coding-agent session logs correct on disk and syncs them between machines.',
    '',
    `${TOP_USAGE}   (these three go before or after the command)`,
    '',
    'Commands:',
    ...loaded.map(([n, summary]) => `  ${n.padEnd(width)}  ${summary}`),
    '',
    'Run `sessync <command> --help` for a command\'s usage.',
  ].join('\n');
}

function commandHelp(name: string, cmd: Command): string {
  return [`Usage: sessync ${name} ${cmd.usage}`, '', cmd.summary, ...(cmd.help ? ['', cmd.help] : []), '', 'Every command takes --json, --cwd DIR and --sessions-dir DIR, before or after its name.'].join('\n');
}

/** Splits argv into the command name and the rest: global flags may come before the name, as in git and gh. */
export function splitCommand(argv: readonly string[]): { name: string | undefined; rest: string[] } {
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return { name: undefined, rest: [...rest, ...argv.slice(i)] };
    if (!a.startsWith('-')) return { name: a, rest: [...rest, ...argv.slice(i + 1)] };
    rest.push(a);
    // A global option that takes a value: its value is not the command name.
    const spec = COMMON[a.slice(2)];
    if (a.startsWith('--') && !a.includes('=') && spec?.type === 'string' && i + 1 < argv.length) rest.push(argv[++i]!);
  }
  return { name: undefined, rest };
}

/** The command's options and the global ones. */
function optionsOf(cmd: Command | undefined): OptionSpec {
  return { ...COMMON, ...(cmd?.options ?? {}) };
}

/**
 * Whether a word is an option of the command or a global one (`--json`, `-h`, `--cwd=DIR`), not a value. A one-letter
 * word is one only when it is a short form there (`-h`): `--summary -x` gives a value, which takes `=`.
 */
function isOptionWord(word: string, cmd: Command | undefined): boolean {
  const options = optionsOf(cmd);
  if (!word.startsWith('--')) return /^-[a-zA-Z]$/.test(word) && Object.values(options).some((o) => o.short === word[1]);
  return Object.hasOwn(options, word.slice(2).split('=')[0]!);
}

/**
 * The word after the occurrence of `opt` that node refused: the first one followed by a dash word, read as node reads
 * argv (another string option's value is skipped, `--` ends the options). Not the first occurrence: with a repeated
 * option (`--map k=/a --map -x=/b`) that one had its value.
 */
function refusedValue(args: readonly string[], opt: string, cmd: Command | undefined): string | undefined {
  const options = optionsOf(cmd);
  for (let i = 0; i < args.length - 1; i++) {
    const a = args[i]!;
    if (a === '--') return undefined;
    const next = args[i + 1]!;
    if (a === opt) {
      if (next.startsWith('-') && next !== '-') return next;
      i++; // its value
    } else if (a.startsWith('--') && !a.includes('=') && options[a.slice(2)]?.type === 'string') i++;
  }
  return undefined;
}

/** node:util's parse errors, reworded: they quote unevenly and suggest `--` tricks no user needs. */
function optionError(e: unknown, name: string | undefined, cmd: Command | undefined, args: readonly string[] = []): SessyncError {
  const err = e as { code?: string; message?: string };
  // Without a command the flags are the global ones: the usage and the help to read are the top-level ones.
  const usage = (name && cmd ? `Usage: sessync ${name} ${cmd.usage}` : TOP_USAGE).trimEnd();
  const more = name ? `sessync ${name} --help` : 'sessync --help';
  const m = /'(-{1,2}[^' ]+)/.exec(err.message ?? '');
  const opt = m?.[1] ?? '';
  let text: string;
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') text = `unknown option ${opt} for sessync ${name}`;
  else if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // "ambiguous": a string option followed by another option (`--cwd --json`), which node will not take as its value.
    // The word after it starts with a dash: another option (then the value is missing), or a value such as "- item",
    // which node refuses to guess at: it is given with `=`.
    const next = refusedValue(args, opt, cmd);
    const dashValue = /argument is ambiguous/.test(err.message ?? '') && next !== undefined && !isOptionWord(next, cmd);
    text = dashValue
      ? `the value of ${opt} starts with a dash (${JSON.stringify(next.length > 40 ? next.slice(0, 40) + '...' : next)}): give it as ${opt}=VALUE so it is not read as an option`
      : /argument missing|argument is ambiguous/.test(err.message ?? '') ? `option ${opt} needs a value` : `option ${opt} takes no value`;
  } else text = err.message ?? String(e);
  return new SessyncError('bad_input', `${text}. ${usage} (\`${more}\` for more)`);
}

export async function main(argv: string[]): Promise<number> {
  // `sessync log | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const { name, rest } = splitCommand(argv);
  const wantsJson = rest.includes('--json');
  if (!name && rest.includes('--version')) {
    process.stdout.write(`sessync ${version}\n`);
    return 0;
  }
  const helpFlag = rest.includes('--help') || rest.includes('-h');
  if (!name || name === 'help') {
    const topic = name === 'help' ? rest.find((a) => !a.startsWith('-')) : undefined;
    if (topic && Object.hasOwn(commands, topic)) {
      process.stdout.write(commandHelp(topic, (await commands[topic]!()).default) + '\n');
      return 0;
    }
    if (!name && !helpFlag) {
      const unknown = rest.find((a) => a.startsWith('-') && !isCommonFlag(a));
      if (unknown) {
        return fail(new SessyncError('bad_input', `unknown option ${unknown.split('=')[0]} before the command. Run \`sessync --help\` for the list.`), wantsJson, EXIT_USAGE);
      }
      // A global flag without its value (`sessync --cwd`) is named, as after a command, not answered with the help.
      try {
        parseArgs({ args: rest, options: COMMON, allowPositionals: true, strict: true });
      } catch (e) {
        return fail(optionError(e, undefined, undefined, rest), wantsJson, EXIT_USAGE);
      }
      // With --json the caller reads stderr for an error document: the help on stdout would be neither.
      if (wantsJson) return fail(new SessyncError('bad_input', `no command given. ${TOP_USAGE} (\`sessync --help\` lists the commands)`), true, EXIT_USAGE);
    }
    process.stdout.write((await topHelp()) + '\n');
    return name || helpFlag ? 0 : EXIT_USAGE;
  }
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined; // `sessync constructor` is unknown, not Object's
  if (!load) {
    return fail(new SessyncError('bad_input', `unknown command "${name}". Run \`sessync --help\` for the list.`), wantsJson, EXIT_USAGE);
  }
  const cmd = (await load()).default;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: { ...COMMON, ...(cmd.options ?? {}) }, allowPositionals: true, strict: true });
  } catch (e) {
    return fail(optionError(e, name, cmd, rest), wantsJson, EXIT_USAGE);
  }
  const opts = parsed.values as CommandContext['opts'];
  if (opts.help) {
    process.stdout.write(commandHelp(name, cmd) + '\n');
    return 0;
  }
  const json = opts.json === true;
  setJsonNotes(json); // notes said after the answer (a cache saved at exit) follow its format
  const sessionsDir = typeof opts['sessions-dir'] === 'string' ? opts['sessions-dir'] : undefined;
  try {
    checkSessionsDirValue(sessionsDir);
  } catch (e) {
    return fail(e, json);
  }
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
    waiting(text, detail) {
      // Never on stdout: with --json that stays the one result document.
      process.stderr.write(json ? JSON.stringify({ waiting: { message: text, ...detail } }) + '\n' : text + '\n');
    },
  };
  let code: number;
  try {
    // Checked before SESSYNC_SESSIONS_DIR is set from the flag: the error names the flag or the variable the user set.
    const use = typeof cmd.usesSessions === 'function' ? await cmd.usesSessions(ctx) : cmd.usesSessions;
    const note = use && use !== 'none' ? checkSessionsDir(sessionsDir, process.env, use) : null;
    if (note) process.stderr.write(noteLine(note));
  } catch (e) {
    return fail(e, json);
  }
  if (sessionsDir !== undefined) process.env.SESSYNC_SESSIONS_DIR = sessionsDir;
  try {
    code = (await cmd.run(ctx)) ?? 0;
  } catch (e) {
    cacheNotes(json); // before the error, which stays the last line
    return fail(e, json);
  }
  cacheNotes(json);
  return code;
}

/** Caches this run could not save, said once each; never on stdout (with --json that stays the one result document). */
function cacheNotes(json: boolean): void {
  setJsonNotes(json);
  for (const n of takeCacheNotes()) process.stderr.write(noteLine(n));
}

function fail(e: unknown, json: boolean, exitCode?: number): number {
  // A raw fs error (a folder made unwritable, a full disk) names its path and what to do, not only a stack.
  const mapped = fsError(e);
  const err = isSessyncError(mapped) ? mapped : new SessyncError('internal', `unexpected error: ${(e as Error)?.stack ?? String(e)}`);
  if (json) process.stderr.write(JSON.stringify({ error: err.toJSON() }) + '\n');
  else process.stderr.write(`sessync: ${err.message}${err.retryable ? ' (retrying may help)' : ''}\n`);
  return exitCode ?? interruptedExit(err) ?? (err.code === 'ambiguous' || err.code === 'bad_input' ? EXIT_USAGE : 1);
}
