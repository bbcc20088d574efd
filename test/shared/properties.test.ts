// Property tests across modules: unknown content round-trips byte for byte; any v1 log migrates to one linear, restorable chain.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildContext } from '../../shared/context.js';
import { parseSession, serializeLine, serializeSession } from '../../shared/jsonl.js';
import { migrateSession } from '../../shared/migrate.js';
import { SessionTree } from '../../shared/tree.js';

const HEADER = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}';
const fieldName = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !['type', 'id', 'parentId', 'timestamp', '__proto__'].includes(k));

describe('round trip', () => {
  it('an entry of an unknown type with arbitrary fields serializes back to the same line', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 12 }).filter((t) => t !== 'session'),
        fc.dictionary(fieldName, fc.jsonValue(), { maxKeys: 6 }),
        (type, extra) => {
          const line = JSON.stringify({ type: `x_${type}`, id: 'e1', parentId: null, timestamp: '2026-01-01T00:00:00.000Z', ...extra });
          const p = parseSession(`${HEADER}\n${line}\n`);
          expect(p.problems).toEqual([]);
          expect(serializeLine(p.entries[0]!)).toBe(line);
        },
      ),
    );
  });
});

describe('v1 migration (property)', () => {
  const v1Entry = fc.oneof(
    fc.record({ type: fc.constant('message'), message: fc.record({ role: fc.constantFrom('user', 'assistant', 'toolResult'), content: fc.string({ maxLength: 20 }) }) }),
    fc.record({ type: fc.constant('model_change'), provider: fc.constantFrom('anthropic', 'openai'), modelId: fc.string({ minLength: 1, maxLength: 10 }) }),
    fc.record({ type: fc.constant('thinking_level_change'), thinkingLevel: fc.constantFrom('off', 'low', 'high') }),
    fc.record({ type: fc.constant('mystery'), payload: fc.jsonValue() }),
  );

  it('gives one linear chain whose branch is the whole file, projects every message, and is idempotent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(v1Entry, { minLength: 1, maxLength: 40 }), async (body) => {
        const lines = [
          JSON.stringify({ type: 'session', id: 'h', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/' }),
          ...body.map((b, i) => JSON.stringify({ ...b, timestamp: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString() })),
        ];
        const text = lines.join('\n') + '\n';
        const m = await migrateSession(parseSession(text));
        const tree = SessionTree.from(m.entries);
        expect(tree.problems).toEqual([]);
        expect(tree.branch().map((e) => e.id)).toEqual(m.entries.map((e) => e.id));
        const ctx = buildContext(tree, { header: m.header });
        expect(ctx.messages).toEqual(body.filter((b) => b.type === 'message').map((b) => (b as { message: unknown }).message));
        const written = serializeSession(m.header, m.entries);
        const again = await migrateSession(parseSession(written));
        expect(again.changed).toBe(false);
        expect(serializeSession(again.header, again.entries)).toBe(written);
        const twice = await migrateSession(parseSession(text));
        expect(serializeSession(twice.header, twice.entries)).toBe(written);
      }),
      { numRuns: 60 },
    );
  });
});
