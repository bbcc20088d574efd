// Entry checks: the fast read-path check, the header check and the strict check of entries a user appends.
import { describe, expect, it } from 'vitest';
import { CHECKOUT_CUSTOM_TYPE, checkEntry, checkHeader, KNOWN_ENTRY_TYPES, validateNewEntry } from '../../shared/entry.js';

const base = { id: 'e1', parentId: null, timestamp: '2026-01-01T10:00:00.000Z' };

describe('checkEntry (read path)', () => {
  const ok: [string, object][] = [
    ['message', { type: 'message', ...base, message: { role: 'user', content: 'x' } }],
    ['thinking_level_change', { type: 'thinking_level_change', ...base, thinkingLevel: 'high' }],
    ['model_change', { type: 'model_change', ...base, provider: 'openai', modelId: 'gpt-5' }],
    ['compaction', { type: 'compaction', ...base, summary: 's', firstKeptEntryId: 'e0', tokensBefore: 3 }],
    ['branch_summary', { type: 'branch_summary', ...base, fromId: 'e0', summary: 's' }],
    ['custom', { type: 'custom', ...base, customType: 'ext' }],
    ['custom_message', { type: 'custom_message', ...base, customType: 'ext', content: [{ type: 'text', text: 'x' }], display: true }],
    ['label', { type: 'label', ...base, targetId: 'e0', label: 'here' }],
    ['label cleared', { type: 'label', ...base, targetId: 'e0' }],
    ['session_info', { type: 'session_info', ...base, name: 'n' }],
    ['unknown type', { type: 'from_the_future', ...base, whatever: [1] }],
    ['legacy 8-hex ids', { type: 'custom', id: 'a1b2c3d4', parentId: 'deadbeef', timestamp: 't', customType: 'x' }],
    // Reading stays tolerant: only new entries must carry ids the server accepts.
    ['an id the server would refuse', { type: 'custom', id: 'odd id/1', parentId: null, timestamp: 't', customType: 'x' }],
  ];
  for (const [name, v] of ok) it(`accepts ${name}`, () => expect(checkEntry(v)).toBeNull());

  const bad: [string, unknown, RegExp][] = [
    ['null', null, /not a JSON object/],
    ['array', [], /not a JSON object/],
    ['no type', { ...base }, /type/],
    ['header', { type: 'session', ...base }, /header/],
    ['empty id', { type: 'custom', ...base, id: '', customType: 'x' }, /id/],
    ['missing parentId', { type: 'custom', id: 'x', timestamp: 't', customType: 'x' }, /parentId/],
    ['numeric timestamp', { type: 'custom', ...base, timestamp: 5, customType: 'x' }, /timestamp/],
    ['message without role', { type: 'message', ...base, message: {} }, /role/],
    ['thinking level not a string', { type: 'thinking_level_change', ...base, thinkingLevel: 3 }, /thinkingLevel/],
    ['compaction with a non-string target', { type: 'compaction', ...base, summary: 's', firstKeptEntryId: 5 }, /firstKeptEntryId/],
    ['custom_message without content', { type: 'custom_message', ...base, customType: 'x' }, /content/],
  ];
  for (const [name, v, re] of bad) it(`rejects ${name}`, () => expect(checkEntry(v)).toMatch(re));
});

describe('checkHeader', () => {
  const h = { type: 'session', version: 3, id: 's', timestamp: 't', cwd: '/r' };
  it('accepts a v3 header and a v1 header with extra fields', () => {
    expect(checkHeader(h)).toBeNull();
    expect(checkHeader({ type: 'session', id: 's', timestamp: 't', cwd: '/r', provider: 'p', modelId: 'm', branchedFrom: '/x' })).toBeNull();
  });
  const bad: [string, unknown][] = [
    ['an entry', { type: 'message', id: 's', timestamp: 't', cwd: '/r' }],
    ['no cwd', { ...h, cwd: undefined }],
    ['version 0', { ...h, version: 0 }],
    ['version string', { ...h, version: '3' }],
    ['parentSession number', { ...h, parentSession: 1 }],
  ];
  for (const [name, v] of bad) it(`rejects ${name}`, () => expect(checkHeader(v)).not.toBeNull());
});

describe('validateNewEntry (append path)', () => {
  it('knows every pi entry type', () => {
    expect([...KNOWN_ENTRY_TYPES].sort()).toEqual(
      ['branch_summary', 'compaction', 'custom', 'custom_message', 'label', 'message', 'model_change', 'session_info', 'thinking_level_change'],
    );
  });
  const ok: object[] = [
    { type: 'message', message: { role: 'user', content: 'hi' } },
    { type: 'model_change', provider: 'openai', modelId: 'gpt-5' },
    { type: 'compaction', summary: 's', firstKeptEntryId: 'x', tokensBefore: 10, details: { files: [] } },
    { type: 'custom', customType: CHECKOUT_CUSTOM_TYPE, data: { targetId: 'x' }, ...base },
    { type: 'custom_message', customType: 'ext', content: 'x', display: false },
    { type: 'label', targetId: 'x', label: 'l' },
    { type: 'session_info', name: 'my session' },
    { type: 'message', message: { role: 'assistant', content: [], provider: 'p', model: 'm' }, extraField: 1 },
    { type: 'message', id: '0192f3a4-5b6c-7d8e-9f00-112233445566', message: { role: 'user', content: 'x' } },
    { type: 'message', id: 'a1b2c3d4', parentId: 'legacy id kept', message: { role: 'user', content: 'x' } },
    { type: 'message', id: 'x'.repeat(128), message: { role: 'user', content: 'x' } },
  ];
  for (const v of ok) {
    it(`accepts ${JSON.stringify(v).slice(0, 60)}`, () => {
      const r = validateNewEntry(v);
      expect(r).toEqual({ ok: true, entry: v });
    });
  }
  const bad: [unknown, RegExp][] = [
    ['text', /JSON object/],
    [{ type: 'nope' }, /unknown entry type "nope"/],
    [{ type: 'session', id: 's' }, /header/],
    [{ message: {} }, /"type"/],
    [{ type: 'message' }, /message/],
    [{ type: 'message', message: { role: '' } }, /message\.role/],
    [{ type: 'model_change', provider: 'p' }, /modelId/],
    [{ type: 'compaction', summary: 's' }, /firstKeptEntryId/],
    [{ type: 'custom_message', customType: 'x', content: 'c' }, /display/],
    [{ type: 'label', targetId: 'x', label: 5 }, /label/],
    [{ type: 'custom', customType: 'x', timestamp: 'yesterday' }, /timestamp/],
    [{ type: 'custom', customType: 'x', parentId: 7 }, /parentId/],
    // Messages pi cannot use: an unknown role, or a role without the fields pi reads.
    [{ type: 'message', message: { role: 'robot', content: 'x' } }, /unknown message role "robot" \(pi reads: user, assistant/],
    [{ type: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'x' }] } }, /message\.provider.*needs "content", "provider", "model"/],
    [{ type: 'message', message: { role: 'assistant', content: [], provider: 'p' } }, /message\.model/],
    [{ type: 'message', message: { role: 'assistant', content: 'x', provider: 'p', model: 'm' } }, /message\.content/],
    [{ type: 'message', message: { role: 'user' } }, /message\.content/],
    [{ type: 'message', message: { role: 'toolResult', toolName: 'bash', content: [] } }, /message\.toolCallId/],
    [{ type: 'message', message: { role: 'bashExecution', command: 'ls' } }, /message\.output/],
    // Ids the sync server refuses (ENTRY_ID_RE): a new entry must never carry one.
    [{ type: 'message', id: 'bad id', message: { role: 'user' } }, /"id": an entry id must/],
    [{ type: 'message', id: '../up', message: { role: 'user' } }, /"id": an entry id must/],
    [{ type: 'message', id: '-lead', message: { role: 'user' } }, /"id": an entry id must/],
    [{ type: 'message', id: 'a'.repeat(129), message: { role: 'user' } }, /"id": an entry id must/],
    [{ type: 'message', id: '', message: { role: 'user' } }, /"id": an entry id must/],
  ];
  for (const [v, re] of bad) {
    it(`rejects ${JSON.stringify(v)}`, () => {
      const r = validateNewEntry(v);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(re);
    });
  }
});
