// `sessync append <ref> [--parent ENTRY] < lines`: appends stdin's JSON lines as entries, all validated before any is written.
import type { Command } from '../command.js';
import { validateNewEntry } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { positionals, sessionOf, stringOpt, unlessPathRef } from '../store/locate.js';
import { readSession } from '../store/session-reader.js';
import { resolveEntry } from '../store/resolve.js';
import { appendCompleted } from '../store/new-entry.js';

const USAGE = 'sessync append <ref> [--parent ENTRY] < entries.jsonl';

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses and validates every line; reports all bad lines at once, naming them. */
function parseLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const errors: string[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      errors.push(`line ${i + 1}: not valid JSON (${(e as Error).message})`);
      return;
    }
    const r = validateNewEntry(v);
    if (r.ok) out.push(r.entry);
    else errors.push(`line ${i + 1}: ${r.reason}`);
  });
  if (errors.length) {
    const shown = errors.slice(0, 20);
    if (errors.length > shown.length) shown.push(`... and ${errors.length - shown.length} more`);
    throw new SessyncError('bad_input', `nothing appended; stdin has ${errors.length} bad line(s):\n${shown.join('\n')}`, { details: { errors } });
  }
  if (out.length === 0) throw new SessyncError('bad_input', `no entries on stdin: give one JSON entry per line. Usage: ${USAGE}`);
  return out;
}

/** Fields that name another entry of the session, per type: what they name must exist. */
function referencesOf(e: Record<string, unknown>): [field: string, id: string][] {
  const out: [string, string][] = [];
  if (e.type === 'label' && typeof e.targetId === 'string') out.push(['label targetId', e.targetId]);
  if (e.type === 'compaction' && typeof e.firstKeptEntryId === 'string') out.push(['compaction firstKeptEntryId', e.firstKeptEntryId]);
  // pi writes fromId "root" for a summary of a branch that left from before the first entry.
  if (e.type === 'branch_summary' && typeof e.fromId === 'string' && e.fromId !== 'root') out.push(['branch_summary fromId', e.fromId]);
  return out;
}

/**
 * Explicit ids must be new; explicit parents, a label's target, a compaction's first kept entry and a
 * branch summary's origin must exist (in the file or earlier in this batch): a label on a missing
 * entry would label nothing, a compaction keeping from a missing entry would keep nothing, and
 * `label` and `compact` refuse the same.
 */
async function checkReferences(path: string, entries: Record<string, unknown>[], parentRef: string | undefined): Promise<string | undefined> {
  const needsFile =
    parentRef !== undefined || entries.some((e) => typeof e.id === 'string' || typeof e.parentId === 'string' || referencesOf(e).length > 0);
  if (!needsFile) return undefined;
  const s = await readSession(path);
  const parent = parentRef === undefined ? undefined : resolveEntry(s.tree, parentRef, 'parent entry').id;
  const batch = new Set<string>();
  const errors: string[] = [];
  entries.forEach((e, i) => {
    if (typeof e.parentId === 'string' && !s.tree.has(e.parentId) && !batch.has(e.parentId)) {
      errors.push(`entry ${i + 1}: parentId ${e.parentId} is not in this session`);
    }
    for (const [field, id] of referencesOf(e)) {
      if (!s.tree.has(id) && !batch.has(id)) errors.push(`entry ${i + 1}: ${field} ${id} is not in this session`);
    }
    if (typeof e.id === 'string') {
      if (s.tree.has(e.id) || batch.has(e.id)) errors.push(`entry ${i + 1}: id ${e.id} is already used`);
      batch.add(e.id);
    }
  });
  if (errors.length) throw new SessyncError('bad_input', `nothing appended:\n${errors.slice(0, 20).join('\n')}`, { details: { errors } });
  return parent;
}

const command: Command = {
  summary: 'Append entries (one JSON object per stdin line) to a session; missing id, parentId and timestamp are filled.',
  usage: '<ref> [--parent ENTRY] < entries.jsonl',
  usesSessions: unlessPathRef('needs'),
  help: 'Each line\'s parent defaults to the previous line\'s entry; the first line\'s to --parent or the leaf.\nEvery line is checked before anything is written: one bad line and the file stays unchanged.',
  options: { parent: { type: 'string' } },
  async run(ctx) {
    const [ref] = positionals(ctx, ['<ref>'], USAGE);
    const parentRef = stringOpt(ctx, 'parent');
    const { session } = await sessionOf(ctx, ref!);
    const partial = parseLines(await readAll(ctx.stdin));
    const parent = await checkReferences(session.path, partial, parentRef);
    const written = await appendCompleted(session.path, partial, { ...(parent ? { firstParent: parent } : {}), note: ctx.info, env: ctx.env });
    const ids = written.map((e) => e.id);
    ctx.print(ids.join('\n'), { ids });
  },
};
export default command;
