// What every local command starts from: the sessions root, this project's real cwd, and a <ref> resolved to a session.
import type { CommandContext, SessionsUse } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { realCwd, sessionsRoot } from './paths.js';
import { looksLikePath, resolveSession } from './resolve.js';
import { piLayout } from './pi-folders.js';
import type { SessionSummary } from './session-index.js';

export interface Place {
  root: string;
  realCwd: string;
  cwd: string;
  /** Folders read with root (pi's two folders). */
  also: string[];
  /** root is pi's flat sessionDir. */
  flat?: true;
  /** The command's environment: its SESSYNC_HOME keeps the caches. */
  env: NodeJS.ProcessEnv;
}

export async function locate(ctx: CommandContext): Promise<Place> {
  return { root: sessionsRoot(ctx.env), realCwd: await realCwd(ctx.cwd), cwd: ctx.cwd, ...piLayout(ctx.env) };
}

/** Checks the positional count: `names` are the required ones, in order; `rest` allows more. */
export function positionals(ctx: CommandContext, names: string[], usage: string, rest = false): string[] {
  const a = ctx.args;
  if (a.length < names.length) throw new SessyncError('bad_input', `missing ${names.slice(a.length).join(' ')}. Usage: ${usage}`);
  if (!rest && a.length > names.length) throw new SessyncError('bad_input', `unexpected argument "${a[names.length]}". Usage: ${usage}`);
  return a;
}

export function stringOpt(ctx: CommandContext, name: string): string | undefined {
  const v = ctx.opts[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new SessyncError('bad_input', `--${name} needs a value`);
  return v;
}

export async function sessionOf(ctx: CommandContext, ref: string): Promise<{ place: Place; session: SessionSummary }> {
  const place = await locate(ctx);
  return { place, session: await resolveSession(ref, place) };
}

/**
 * A command's use of the sessions folder when its <ref> may be a path: a ref naming a file reads and writes that file
 * only, so a named sessions folder that does not exist yet is no reason to refuse it (`doctor ./copy.jsonl` on a new
 * machine). Every other ref is looked up in the folder: `use`.
 */
export function unlessPathRef(use: SessionsUse): (ctx: CommandContext) => Promise<SessionsUse | null> {
  return async (ctx) => (ctx.args[0] !== undefined && looksLikePath(ctx.args[0]) ? null : use);
}
