// Migrations: v1 -> v2 -> v3 in order, idempotent, deterministic ids, nothing lost, input untouched.
import { describe, expect, it } from 'vitest';
import { CURRENT_VERSION } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { deterministicId } from '../../shared/ids.js';
import { parseSession, serializeSession } from '../../shared/jsonl.js';
import { migrateSession } from '../../shared/migrate.js';
import { SessionTree } from '../../shared/tree.js';

const v1Text = [
  { type: 'session', id: 'h1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/r', provider: 'anthropic', modelId: 'm1', thinkingLevel: 'low', branchedFrom: '/old/path.jsonl' },
  { type: 'message', timestamp: '2025-01-01T00:00:01.000Z', message: { role: 'user', content: 'a' }, extra: { keep: true } },
  { type: 'message', timestamp: '2025-01-01T00:00:02.000Z', message: { role: 'hookMessage', content: 'hook' } },
  { type: 'model_change', timestamp: '2025-01-01T00:00:03.000Z', provider: 'openai', modelId: 'gpt' },
  { type: 'compaction', timestamp: '2025-01-01T00:00:04.000Z', summary: 's', firstKeptEntryIndex: 3, tokensBefore: 9 },
  { type: 'unknown_v1_thing', timestamp: '2025-01-01T00:00:05.000Z', blob: [1, 2] },
].map((x) => JSON.stringify(x) + '\n').join('');

describe('v1 -> current', () => {
  it('gives deterministic ids, a linear chain, firstKeptEntryId, the new role, and keeps the header model', async () => {
    const parsed = parseSession(v1Text);
    const snapshot = JSON.stringify(parsed);
    const m = await migrateSession(parsed);
    expect(JSON.stringify(parsed)).toBe(snapshot); // input untouched
    expect(m).toMatchObject({ fromVersion: 1, toVersion: CURRENT_VERSION, changed: true });
    // The header's model and thinking level first, as entries pi reads (ids derived, so machines agree).
    const [model, thinking, ...rest] = m.entries;
    expect(model).toEqual({ type: 'model_change', id: await deterministicId('h1:header:model'), parentId: null, timestamp: '2025-01-01T00:00:00.000Z', provider: 'anthropic', modelId: 'm1' });
    expect(thinking).toEqual({ type: 'thinking_level_change', id: await deterministicId('h1:header:thinking'), parentId: model!.id, timestamp: '2025-01-01T00:00:00.000Z', thinkingLevel: 'low' });
    const expectedIds = await Promise.all([1, 2, 3, 4, 5].map((i) => deterministicId(`h1:${i}`)));
    expect(rest.map((e) => e.id)).toEqual(expectedIds);
    expect(rest.map((e) => e.parentId)).toEqual([thinking!.id, ...expectedIds.slice(0, 4)]);
    expect(Object.keys(rest[0]!).slice(0, 4)).toEqual(['type', 'id', 'parentId', 'timestamp']);
    expect(rest[0]).toMatchObject({ extra: { keep: true } });
    expect(rest[1]!.message).toEqual({ role: 'custom', content: 'hook' });
    expect(rest[3]).toMatchObject({ type: 'compaction', firstKeptEntryId: expectedIds[2], tokensBefore: 9 });
    expect(rest[3]).not.toHaveProperty('firstKeptEntryIndex');
    expect(rest[4]).toMatchObject({ type: 'unknown_v1_thing', blob: [1, 2] });
    expect(m.header).toEqual({ type: 'session', id: 'h1', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/r', provider: 'anthropic', modelId: 'm1', thinkingLevel: 'low', version: 3, parentSession: '/old/path.jsonl' });
    expect(SessionTree.from(m.entries).problems).toEqual([]);
  });

  it('two machines migrating the same file produce identical output', async () => {
    const a = await migrateSession(parseSession(v1Text));
    const b = await migrateSession(parseSession(v1Text));
    expect(serializeSession(b.header, b.entries)).toBe(serializeSession(a.header, a.entries));
  });

  it('a corrupt line on one machine does not shift the ids of the others', async () => {
    const clean = await migrateSession(parseSession(v1Text));
    const lines = v1Text.split('\n');
    lines[1] = '{"type":"message","timest'; // the first entry is damaged here
    const damaged = parseSession(lines.join('\n'));
    expect(damaged.problems.map((p) => p.line)).toEqual([2]);
    const m = await migrateSession(damaged);
    // The two header settings, then every entry but the damaged one, with the same ids.
    expect(m.entries.map((e) => e.id)).toEqual([...clean.entries.slice(0, 2), ...clean.entries.slice(3)].map((e) => e.id));
    expect(m.entries[4]).toMatchObject({ type: 'compaction', firstKeptEntryId: clean.entries[4]!.id });
  });

  it('is idempotent: migrating the written result again changes nothing', async () => {
    const once = await migrateSession(parseSession(v1Text));
    const text = serializeSession(once.header, once.entries);
    const twice = await migrateSession(parseSession(text));
    expect(twice.changed).toBe(false);
    expect(twice.fromVersion).toBe(3);
    expect(serializeSession(twice.header, twice.entries)).toBe(text);
  });

  it('an index that points at nothing drops firstKeptEntryIndex without inventing a target', async () => {
    const text = ['{"type":"session","id":"h","timestamp":"t","cwd":"/"}', '{"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":99}'].join('\n');
    const m = await migrateSession(parseSession(text));
    expect(m.entries[0]).not.toHaveProperty('firstKeptEntryIndex');
    expect(m.entries[0]).not.toHaveProperty('firstKeptEntryId');
    // Still loadable once written: the compaction keeps only what follows it.
    const again = parseSession(serializeSession(m.header, m.entries));
    expect(again.problems).toEqual([]);
    expect(again.entries).toHaveLength(1);
  });
});

describe('steps and edges', () => {
  it('v2 -> v3 renames only hookMessage roles and keeps ids', async () => {
    const text = [
      '{"type":"session","version":2,"id":"h","timestamp":"t","cwd":"/"}',
      '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"hookMessage","content":"x","customType":"c"}}',
      '{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"y"}}',
    ].join('\n');
    const parsed = parseSession(text);
    const m = await migrateSession(parsed);
    expect(m).toMatchObject({ fromVersion: 2, toVersion: 3, changed: true });
    expect(m.entries.map((e) => [e.id, (e.message as { role: string }).role])).toEqual([['a', 'custom'], ['b', 'user']]);
    expect(m.entries[1]).toBe(parsed.entries[1]); // unchanged entries are shared, not copied
    expect((parsed.entries[0]!.message as { role: string }).role).toBe('hookMessage');
  });

  it('a current file is returned as it is', async () => {
    const parsed = parseSession('{"type":"session","version":3,"id":"h","timestamp":"t","cwd":"/"}\n{"type":"custom","id":"a","parentId":null,"timestamp":"t","customType":"x"}\n');
    const m = await migrateSession(parsed);
    expect(m.changed).toBe(false);
    expect(m.header).toBe(parsed.header);
    expect(m.entries).toBe(parsed.entries);
  });

  it('a file from a newer writer is kept unchanged', async () => {
    const parsed = parseSession('{"type":"session","version":7,"id":"h","timestamp":"t","cwd":"/"}\n');
    const m = await migrateSession(parsed);
    expect(m).toMatchObject({ fromVersion: 7, toVersion: 7, changed: false });
  });

  it('no header: corrupt', async () => {
    await expect(migrateSession(parseSession('garbage\n'))).rejects.toSatisfy((e: unknown) => e instanceof SessyncError && e.code === 'corrupt');
  });

  it('v1 lines that already carry ids keep them', async () => {
    const text = ['{"type":"session","id":"h","timestamp":"t","cwd":"/"}', '{"type":"custom","id":"keep1","timestamp":"t","customType":"x"}', '{"type":"custom","timestamp":"t","customType":"x"}'].join('\n');
    const m = await migrateSession(parseSession(text));
    expect(m.entries[0]!.id).toBe('keep1');
    expect(m.entries[1]!.parentId).toBe('keep1');
  });
});
