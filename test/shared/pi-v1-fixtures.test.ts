// pi's two real v1 session files migrate and restore with the right model, thinking level and compaction projection.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildContext } from '../../shared/context.js';
import { deterministicId } from '../../shared/ids.js';
import { parseSession, serializeLine, serializeSession } from '../../shared/jsonl.js';
import { migrateSession } from '../../shared/migrate.js';
import { SessionTree } from '../../shared/tree.js';
import { PI_V1_DIR } from './log-builder.js';

const present = existsSync(join(PI_V1_DIR, 'large-session.jsonl')) && existsSync(join(PI_V1_DIR, 'before-compaction.jsonl'));
if (!present) console.warn(`pi v1 fixtures not found at ${PI_V1_DIR}: the fixture tests are skipped`);

async function restore(name: string) {
  const text = readFileSync(join(PI_V1_DIR, name), 'utf8');
  const parsed = parseSession(text);
  const m = await migrateSession(parsed);
  const tree = SessionTree.from(m.entries);
  return { text, parsed, m, tree, ctx: buildContext(tree, { header: m.header }) };
}

const userText = (msg: unknown) => ((msg as { content: { text: string }[] }).content[0]!.text);

describe.skipIf(!present)('pi v1 fixtures (../shared/fixtures/pi-v1)', () => {
  it('before-compaction.jsonl: latest compaction projects from line 551, model and thinking level from the log', async () => {
    const { parsed, m, tree, ctx } = await restore('before-compaction.jsonl');
    expect(parsed.problems).toEqual([]);
    expect(parsed.version).toBe(1);
    expect(m).toMatchObject({ fromVersion: 1, toVersion: 3, changed: true });
    expect(tree.size).toBe(1004); // 1,002 lines + the header's model and thinking level as entries
    expect(tree.problems).toEqual([]);
    expect(tree.branch().length).toBe(1004); // linear

    const headerId = 'ffae836b-9420-4060-ac13-7745215f90ff';
    // Line indexes count the header as 0: the compactions are lines 359 and 628.
    const [c1, c2] = tree.entries.filter((e) => e.type === 'compaction');
    expect(c1!.id).toBe(await deterministicId(`${headerId}:359`));
    expect(c1!.firstKeptEntryId).toBe(await deterministicId(`${headerId}:293`));
    expect(c2!.firstKeptEntryId).toBe(await deterministicId(`${headerId}:551`));
    expect(tree.get(c2!.firstKeptEntryId as string)!.timestamp).toBe('2025-12-08T23:48:59.422Z');

    expect(ctx.model).toEqual({ provider: 'anthropic', modelId: 'claude-opus-4-5' });
    expect(ctx.thinkingLevel).toBe('off'); // the last of five thinking_level_change entries (line 1002)
    // 1 summary + messages of lines 551..627 + messages after the compaction (629..1001).
    expect(ctx.messages).toHaveLength(446);
    expect(ctx.messages[0]).toMatchObject({ role: 'compactionSummary', tokensBefore: 185014 });
    expect((ctx.messages[0] as { summary: string }).summary).toMatch(/^# Context Checkpoint: Coding Agent Refactoring/);
    expect(ctx.messages[1]).toMatchObject({ role: 'user' });
    expect(userText(ctx.messages[1])).toBe('can leave it');
    expect(ctx.messages.filter((x) => (x as { role: string }).role === 'compactionSummary')).toHaveLength(1);

    // Header: the model survives, branchedFrom became parentSession.
    expect(m.header).toMatchObject({ version: 3, provider: 'anthropic', modelId: 'claude-opus-4-5', thinkingLevel: 'off' });
    expect(m.header.parentSession).toMatch(/2025-12-09T00-52-54-397Z_d97339c6-6c10-4827-846b-9ff1d9c3dc37\.jsonl$/);
    expect(m.header).not.toHaveProperty('branchedFrom');

    // The branch before the second compaction still projects through the first one.
    const before = buildContext(tree, { leafId: tree.entries[628]!.id, header: m.header });
    expect(before.messages[0]).toMatchObject({ role: 'compactionSummary', tokensBefore: 175004 });
    expect(userText(before.messages[1])).toBe("i reviwed what we have, it's good. continue");
  });

  it('large-session.jsonl: every message projected, model and thinking level right', async () => {
    const { parsed, m, tree, ctx } = await restore('large-session.jsonl');
    expect(parsed.problems).toEqual([]);
    expect(tree.size).toBe(1020);
    expect(tree.problems).toEqual([]);
    expect(ctx.messages).toHaveLength(914);
    expect(ctx.model).toEqual({ provider: 'anthropic', modelId: 'claude-sonnet-4-5' });
    expect(ctx.thinkingLevel).toBe('off');
    expect(userText(ctx.messages[0])).toBe('/mode');
    expect(m.header).toMatchObject({ version: 3, provider: 'anthropic', modelId: 'claude-sonnet-4-5', thinkingLevel: 'off' });
    // Before the model_change on line 3 the branch says openai (from the assistant message on line 2).
    expect(buildContext(tree, { leafId: tree.entries[3]!.id, header: m.header }).model).toEqual({ provider: 'openai', modelId: 'gpt-5.1-codex' });
  });

  for (const name of ['large-session.jsonl', 'before-compaction.jsonl']) {
    it(`${name}: migration keeps every field of every line and is idempotent`, async () => {
      const { text, m } = await restore(name);
      const original = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(m.entries.slice(0, 2).map((e) => e.type)).toEqual(['model_change', 'thinking_level_change']);
      original.slice(1).forEach((o, i) => {
        const e = m.entries[i + 2]!;
        for (const [k, v] of Object.entries(o)) {
          if (k === 'firstKeptEntryIndex') continue;
          expect(e[k]).toEqual(v);
        }
      });
      const written = serializeSession(m.header, m.entries);
      const again = await migrateSession(parseSession(written));
      expect(again.changed).toBe(false);
      expect(serializeSession(again.header, again.entries)).toBe(written);
      expect(serializeLine(again.entries[0]!)).toBe(serializeLine(m.entries[0]!));
    });
  }
});
