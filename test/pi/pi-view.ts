// What pi and what sessync make of one session file: pi's real SessionManager and context builder (from the
// package's dist) beside sessync's loader, reduced to what a resumed session depends on.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { SessionManager } from '@mariozechner/pi-coding-agent';
import { buildContext } from '../../shared/context.js';
import { readSession } from '../../cli/store/session-reader.js';
import { REPO_ROOT } from '../helpers/cli.js';

export interface View {
  leafId: string | null;
  /** Entry ids from the root to the leaf. */
  branch: string[];
  model: { provider: string; modelId: string } | null;
  thinkingLevel: string;
  messages: unknown[];
}

export const FIXTURES = join(REPO_ROOT, '..', 'shared', 'fixtures');

/**
 * pi's view. pi rewrites a file it migrates, so it reads a copy, never the file itself; a session file pi would
 * migrate is the caller's to avoid (compare after sessync's migration).
 */
export function piView(path: string): View {
  const dir = mkdtempSync(join(tmpdir(), 'sessync-piview-'));
  const copy = join(dir, basename(path));
  copyFileSync(path, copy);
  const sm = SessionManager.open(copy, dir);
  const ctx = sm.buildSessionContext();
  rmSync(dir, { recursive: true, force: true });
  return {
    leafId: sm.getLeafId(),
    branch: sm.getBranch().map((e) => e.id),
    model: ctx.model ? { provider: ctx.model.provider, modelId: ctx.model.modelId } : null,
    thinkingLevel: ctx.thinkingLevel,
    messages: ctx.messages,
  };
}

/** sessync's view: the CLI's loader (an old format migrated in memory) and the library's context projection. */
export async function sessyncView(path: string): Promise<View> {
  const s = await readSession(path);
  const ctx = buildContext(s.tree, { header: s.header });
  return {
    leafId: s.tree.leafId,
    branch: s.tree.branch().map((e) => e.id),
    model: ctx.model,
    thinkingLevel: ctx.thinkingLevel,
    messages: ctx.messages,
  };
}

/** JSON round trip: pi's and sessync's messages are compared as the JSON a file or a request would carry. */
export function plain(v: View): View {
  return JSON.parse(JSON.stringify(v)) as View;
}

/** Every .jsonl fixture of ../shared/fixtures/<sub> (none when the folder is absent: the caller skips loudly). */
export function fixtureFiles(sub: string): string[] {
  const dir = join(FIXTURES, sub);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort().map((f) => join(dir, f));
}
