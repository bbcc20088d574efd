// The real Claude Code CLI (the registry's native binary) run headless against the fake Messages API.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The platform package's binary, or null (with the reason) when it is not installed or cannot run here. */
export async function findClaude(): Promise<{ bin: string } | { bin: null; why: string }> {
  const pkg = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  let bin: string;
  try {
    bin = join(dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`)), process.platform === 'win32' ? 'claude.exe' : 'claude');
  } catch {
    return { bin: null, why: `${pkg} is not installed (npm ci installs it with @anthropic-ai/claude-code)` };
  }
  if (!existsSync(bin)) return { bin: null, why: `${bin} is missing` };
  try {
    await run(bin, ['--version'], { timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', DISABLE_AUTOUPDATER: '1' } });
  } catch (e) {
    return { bin: null, why: `${bin} --version failed: ${(e as Error).message}` };
  }
  return { bin };
}

/** One headless run in `cwd` with its own HOME and CLAUDE_CONFIG_DIR, talking only to the fake API at `api`. */
export async function claude(bin: string, o: { cwd: string; home: string; configDir: string; api: string }, args: string[]): Promise<string> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: o.home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CLAUDE_CONFIG_DIR: o.configDir,
    ANTHROPIC_BASE_URL: o.api,
    ANTHROPIC_API_KEY: 'dummy',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
  try {
    return (await run(bin, args, { cwd: o.cwd, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 })).stdout;
  } catch (e) {
    const x = e as Error & { stdout?: string; stderr?: string };
    throw new Error(`claude ${args.join(' ')} failed: ${x.message}\nstdout: ${x.stdout ?? ''}\nstderr: ${x.stderr ?? ''}`);
  }
}

/**
 * The turns of a Messages API request's conversation whose text matches `ours` (the test's own prompts and answers;
 * what Claude Code adds around them, reminders and environment notes, left out), in order, as "role: text".
 */
export function conversationTexts(request: Record<string, unknown>, ours: RegExp): string[] {
  const out: string[] = [];
  for (const m of (request.messages as { role: string; content: unknown }[]) ?? []) {
    const parts = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as { type: string; text?: string }[]);
    for (const p of parts) if (p.type === 'text' && typeof p.text === 'string' && ours.test(p.text.trim())) out.push(`${m.role}: ${p.text.trim()}`);
  }
  return out;
}
