// Codex lines in the viewer and under redaction: every line of every real Codex fixture, and planted secrets.
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexRedactionTargets, renderCodexLine } from '../../shared/agents/codex-render.js';
import { redactValue, scanValue, totalOf } from '../../shared/redact.js';
import { fixtureFiles, read } from './fixture-samples.js';

type Obj = Record<string, unknown>;
const files = fixtureFiles('codex');

function linesOf(path: string): Obj[] {
  return read(path)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Obj);
}

function texts(content: unknown): string[] {
  return Array.isArray(content) ? content.flatMap((c: Obj) => (typeof c.text === 'string' && c.text !== '' ? [c.text] : [])) : [];
}

const SECRET = 'sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789';

describe('renderCodexLine on the real Codex fixtures', () => {
  it.skipIf(files.length === 0)('finds the fixtures', () => expect(files.length).toBeGreaterThan(0));
  for (const path of files) {
    it(`${basename(path)}: every line renders without throwing, every message, tool call and output is shown`, () => {
      let messages = 0;
      let calls = 0;
      for (const v of linesOf(path)) {
        const parts = renderCodexLine(v);
        const shown = parts.map((p) => p.text).join('\n');
        const p = v.payload as Obj;
        if (v.type !== 'response_item') {
          // Header, turn settings and UI events repeat what response_item lines hold: not shown twice.
          if (v.type !== 'compacted' && !(v.type === 'event_msg' && (p.type === 'turn_aborted' || p.type === 'error'))) expect(parts).toEqual([]);
          continue;
        }
        if (p.type === 'message') {
          messages++;
          for (const t of texts(p.content)) expect(shown).toContain(t);
          const kinds = new Set(parts.map((x) => x.kind));
          if (p.role === 'assistant') expect([...kinds]).toEqual(['assistant']);
          if (p.role === 'developer') expect([...kinds]).toEqual(['system']);
        } else if (p.type === 'function_call') {
          calls++;
          expect(shown).toContain(String(p.name));
          expect(shown).toContain(String(p.arguments));
          expect(parts[0]!.kind).toBe('tool_call');
        } else if (p.type === 'custom_tool_call') {
          expect(shown).toContain(String(p.name));
          expect(shown).toContain(String(p.input));
        } else if (p.type === 'function_call_output' || p.type === 'custom_tool_call_output') {
          expect(parts[0]!.kind).toBe('tool_result');
          if (typeof p.output === 'string') expect(shown).toBe(p.output);
        } else if (p.type === 'reasoning') {
          const summary = texts(p.summary);
          if (summary.length > 0) for (const t of summary) expect(shown).toContain(t);
          else expect(shown).toBe('[encrypted reasoning]');
          expect(shown).not.toContain(String(p.encrypted_content));
        }
      }
      expect(messages).toBeGreaterThan(0);
      expect(calls).toBeGreaterThan(0);
    });
  }

  it('shows a user prompt as the user, injected context collapsed, and a compaction with its summary', () => {
    const user = (text: string) => renderCodexLine({ type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
    expect(user('fix the bug')).toEqual([{ kind: 'user', text: 'fix the bug' }]);
    expect(user('<environment_context>\n  <cwd>/x</cwd>\n</environment_context>')[0]).toMatchObject({ kind: 'system', collapsed: true });
    expect(renderCodexLine({ type: 'compacted', payload: { message: 'we fixed the bug', replacement_history: [] } })).toEqual([
      { kind: 'system', text: 'conversation compacted' },
      { kind: 'summary', text: 'we fixed the bug' },
    ]);
    expect(renderCodexLine({ type: 'response_item', payload: { type: 'function_call_output', call_id: 'c', output: { content: 'ok', success: true } } })).toEqual([
      { kind: 'tool_result', text: 'ok', collapsed: true },
    ]);
    expect(renderCodexLine({ type: 'response_item', payload: { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'plain thoughts' }] } })).toEqual([
      { kind: 'thinking', text: 'plain thoughts', collapsed: true },
    ]);
  });

  it('never throws on odd values: a missing or non-object payload, unknown types, wrong field types', () => {
    const odd: unknown[] = [
      {},
      { type: 'response_item' },
      { type: 'response_item', payload: 'x' },
      { type: 'response_item', payload: [1, 2] },
      { type: 'response_item', payload: { type: 'message', role: 'user', content: [null, 3, { text: 5 }] } },
      { type: 'response_item', payload: { type: 'function_call', name: 7, arguments: { a: 1 } } },
      { type: 'response_item', payload: { type: 'function_call_output', output: null } },
      { type: 'response_item', payload: { type: 'local_shell_call', action: null } },
      { type: 'response_item', payload: { type: 'new_kind_of_item' } },
      { type: 'compacted', payload: { message: 42 } },
      { type: 'event_msg', payload: { type: 'turn_aborted' } },
    ];
    for (const v of odd) {
      expect(() => renderCodexLine(v as Obj)).not.toThrow();
      expect(() => codexRedactionTargets(v as Obj)).not.toThrow();
    }
  });
});

describe('codexRedactionTargets', () => {
  const planted: [string, Obj][] = [
    ['a user message', { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `my key is ${SECRET}` }] } }],
    ['an assistant message', { type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `use ${SECRET}` }] } }],
    ['a developer message', { type: 'response_item', payload: { type: 'message', role: 'developer', content: [{ type: 'input_text', text: SECRET }] } }],
    ['function_call arguments', { type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['curl', '-H', `x: ${SECRET}`] }), call_id: 'c1' } }],
    ['custom_tool_call input', { type: 'response_item', payload: { type: 'custom_tool_call', name: 'apply_patch', input: `*** Begin Patch\n+KEY=${SECRET}\n*** End Patch`, call_id: 'c2' } }],
    ['function_call_output', { type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: `Exit code: 0\nOutput:\n${SECRET}\n` } }],
    ['function_call_output as an object', { type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: { content: SECRET, success: true } } }],
    ['custom_tool_call_output', { type: 'response_item', payload: { type: 'custom_tool_call_output', call_id: 'c2', output: JSON.stringify({ output: SECRET }) } }],
    ['a reasoning summary', { type: 'response_item', payload: { type: 'reasoning', summary: [{ type: 'summary_text', text: SECRET }], encrypted_content: 'gAAAA' } }],
    ['a compaction', { type: 'compacted', payload: { message: `summary: ${SECRET}` } }],
    ['an event', { type: 'event_msg', payload: { type: 'exec_command_end', aggregated_output: SECRET } }],
    ['a user_message event', { type: 'event_msg', payload: { type: 'user_message', message: SECRET, images: [] } }],
    ['turn_context instructions', { type: 'turn_context', payload: { cwd: '/w', user_instructions: SECRET, model: 'm' } }],
    ['session_meta instructions', { type: 'session_meta', payload: { id: 'x', cwd: '/w', instructions: SECRET } }],
    ['an unknown item type', { type: 'response_item', payload: { type: 'brand_new', data: SECRET } }],
  ];
  for (const [what, v] of planted) {
    it(`covers ${what}: the planted secret is found there and redaction removes it`, () => {
      expect(totalOf(scanValue(codexRedactionTargets(v)))).toBeGreaterThan(0);
      const { value } = redactValue(v);
      expect(JSON.stringify(value)).not.toContain(SECRET);
      expect(JSON.stringify(value)).toContain('[REDACTED:openai_key]');
    });
  }

  it('leaves out encrypted reasoning (provider ciphertext) and the ids Codex resumes by', () => {
    const v = { type: 'response_item', payload: { type: 'reasoning', summary: [], content: null, encrypted_content: 'gAAAAsecret' } };
    expect(JSON.stringify(codexRedactionTargets(v))).not.toContain('gAAAAsecret');
    const call = { type: 'response_item', payload: { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'call_abc' } };
    expect(JSON.stringify(codexRedactionTargets(call))).not.toContain('call_abc');
  });

  for (const path of files) {
    it(`${basename(path)}: every message text, function_call arguments and output is among the targets`, () => {
      for (const v of linesOf(path)) {
        const p = v.payload as Obj;
        if (v.type !== 'response_item') continue;
        const targets = JSON.stringify(codexRedactionTargets(v));
        const need =
          p.type === 'message' ? texts(p.content) : p.type === 'function_call' ? [p.arguments] : String(p.type).endsWith('_output') ? [p.output] : [];
        for (const n of need) expect(targets).toContain(typeof n === 'string' ? JSON.stringify(n).slice(1, -1) : JSON.stringify(n));
      }
    });
  }
});
