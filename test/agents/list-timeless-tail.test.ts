// `list` of Claude Code sessions whose files end in lines without a timestamp (Claude Code 2.1's last-prompt and
// cost-state): the time shown is the newest timestamped line's, and the sessions sort by it.
import { appendFileSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { ClaudeMachine, turn } from './claude-rig.js';

const OLD = '0a0a0a0a-1111-4222-8333-444444444444';
const NEW = '0b0b0b0b-1111-4222-8333-444444444444';

/** What Claude Code 2.1 writes after a turn, without a timestamp. */
const timeless = (session: string) =>
  [
    { type: 'last-prompt', lastPrompt: 'again', leafUuid: 'x', sessionId: session },
    { type: 'cost-state', sessionId: session, totalCostUSD: 0.0123, totalInputTokens: 120, totalOutputTokens: 45 },
  ]
    .map((o) => `${JSON.stringify(o)}\n`)
    .join('');

describe('list: Claude Code files ending in lines without a timestamp', () => {
  const t = tempDir('sessync-cclisttime-');
  afterAll(() => t.cleanup());

  it('shows the newest timestamped line and sorts by it, on the first list and after an append', async () => {
    const m = new ClaudeMachine(t.dir, 'm');
    const cwd = realpathSync(m.project);
    m.write(`${OLD}.jsonl`, turn(OLD, cwd, null, 'old one', ['a1a1a1a1-0000-4000-8000-000000000001', 'a1a1a1a1-0000-4000-8000-000000000002'], '2026-02-01T10:00:00.000Z') + timeless(OLD));
    m.write(`${NEW}.jsonl`, turn(NEW, cwd, null, 'new one', ['b1b1b1b1-0000-4000-8000-000000000001', 'b1b1b1b1-0000-4000-8000-000000000002'], '2026-03-01T10:00:00.000Z') + timeless(NEW));
    const rows = (await m.ok(['list', '--agent', 'claude-code', '--json'])) as { id: string; lastEntryAt: string }[];
    // Seen failing on old code: "lastEntryAt": "" for both (the mirror's last line, a cost-state, has no time).
    expect(rows.map((r) => [r.id, r.lastEntryAt])).toEqual([
      [NEW, '2026-03-01T10:00:00.000Z'],
      [OLD, '2026-02-01T10:00:00.000Z'],
    ]);

    // The old one gets a newer turn (and its timeless lines): it is listed first, at that turn's time.
    appendFileSync(`${m.folder}/${OLD}.jsonl`, turn(OLD, cwd, 'a1a1a1a1-0000-4000-8000-000000000002', 'later', ['a1a1a1a1-0000-4000-8000-000000000003', 'a1a1a1a1-0000-4000-8000-000000000004'], '2026-04-01T10:00:00.000Z') + timeless(OLD));
    const again = (await m.ok(['list', '--agent', 'claude-code', '--json'])) as { id: string; lastEntryAt: string }[];
    const want = [
      [OLD, '2026-04-01T10:00:00.000Z'],
      [NEW, '2026-03-01T10:00:00.000Z'],
    ];
    expect(again.map((r) => [r.id, r.lastEntryAt])).toEqual(want);

    // The list cache an older sessync left (format 5, its rows saying ""): read again once, not believed.
    const dir = join(m.home, 'cache', 'list');
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.json'))) {
      const c = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { format: number; rows: unknown[][] };
      writeFileSync(join(dir, f), JSON.stringify({ ...c, format: 5, rows: c.rows.map((r) => r.map((v, i) => (i === 8 ? '' : v))) }));
    }
    const cached = (await m.ok(['list', '--agent', 'claude-code', '--json'])) as { id: string; lastEntryAt: string }[];
    expect(cached.map((r) => [r.id, r.lastEntryAt])).toEqual(want);
  });
});
