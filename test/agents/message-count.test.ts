// Each agent's message count (Agent.countMessage, what `list` shows) on real files and on the lines that decide it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../shared/agents/agent.js';
import { claudeCode } from '../../shared/agents/claude-code.js';
import { codex } from '../../shared/agents/codex.js';
import { pi } from '../../shared/agents/pi.js';
import { FIXTURES } from './fixture-samples.js';

/** The count of `lines` of one file, read in pieces of `piece` lines, the mark carried across (as appends do). */
function count(agent: Agent, lines: readonly string[], file = '', piece = lines.length): number {
  let n = 0;
  let mark: string | null = null;
  for (let i = 0; i < lines.length; i += piece) {
    for (const l of lines.slice(i, i + piece)) {
      const r = agent.countMessage(l, file, mark);
      if (r.counts) n++;
      mark = r.mark;
    }
  }
  return n;
}

const linesOf = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');

/**
 * Real files and their counts. Claude Code: user lines (tool results among them) less isMeta and compact-summary ones,
 * plus one per assistant message id; Codex: typed user messages, tool outputs and model responses (as many as the
 * rollout's token_count events per response say); pi: its `message` entries, every role.
 */
const REAL: { agent: Agent; file: string; messages: number; why: string }[] = [
  { agent: claudeCode, file: 'claude-code/lanegrid__agtrace__claude_session.jsonl', messages: 14, why: '8 user lines (one more is isMeta), 13 assistant lines of 6 responses' },
  { agent: claudeCode, file: 'claude-code/codemie-ai__codemie-code__session-624a4a58.jsonl', messages: 122, why: '67 user lines (besides an isMeta one and the compact summary), 132 assistant lines of 55 responses' },
  { agent: claudeCode, file: 'claude-code/d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl', messages: 22, why: '405 inline subagent lines left out: 13 user lines (one more isMeta), 18 assistant lines of 9 responses' },
  { agent: claudeCode, file: 'claude-code/lanegrid__agtrace__claude_agent.jsonl', messages: 0, why: 'a subagent file: every line isSidechain' },
  { agent: codex, file: 'codex/lanegrid__agtrace__codex_session.jsonl', messages: 14, why: '2 typed user messages (a third is the injected environment), 5 tool outputs, 7 responses' },
  { agent: codex, file: 'codex/codemie-ai__codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl', messages: 170, why: '2 typed user messages, 102 tool outputs, 66 responses (66 token_count events)' },
  { agent: pi, file: 'pi-v3/specstoryai__getspecstory__real_world.jsonl', messages: 8, why: '2 user, 3 assistant, 2 toolResult, 1 bashExecution' },
  { agent: pi, file: 'pi-v3/jazzyalex__agent-sessions__small.jsonl', messages: 4, why: '2 user, 2 assistant; 2 compactions and settings do not count' },
];

for (const r of REAL) if (!existsSync(join(FIXTURES, r.file))) console.warn(`fixture ${join(FIXTURES, r.file)} not found: its count test is skipped`);

describe('message counts of real session files', () => {
  for (const r of REAL) {
    const path = join(FIXTURES, r.file);
    it.skipIf(!existsSync(path))(`${r.agent.name} ${r.file}: ${r.messages} (${r.why})`, () => {
      const lines = linesOf(path);
      expect(count(r.agent, lines)).toBe(r.messages);
      // Read in pieces, as a file that grows is (each append counts its lines from the mark the last one left).
      for (const piece of [1, 2, 3, 7]) expect(count(r.agent, lines, '', piece)).toBe(r.messages);
    });
  }
});

const L = (o: object) => JSON.stringify(o);

describe('Claude Code: what counts as a message', () => {
  const user = (uuid: string, content: unknown, more: object = {}) => L({ parentUuid: null, isSidechain: false, type: 'user', message: { role: 'user', content }, uuid, timestamp: '2026-01-01T00:00:00.000Z', ...more });
  const assistant = (uuid: string, id: string | undefined, block: object, more: object = {}) =>
    L({ parentUuid: null, isSidechain: false, type: 'assistant', message: { ...(id ? { id } : {}), role: 'assistant', content: [block] }, uuid, timestamp: '2026-01-01T00:00:00.000Z', ...more });

  it('one response written as several lines counts once, tool results between them and all', () => {
    const lines = [
      user('u1', 'fix it'),
      assistant('a1', 'msg_1', { type: 'thinking', thinking: 'hm' }),
      assistant('a2', 'msg_1', { type: 'tool_use', id: 't1', name: 'Read', input: {} }),
      user('u2', [{ type: 'tool_result', tool_use_id: 't1', content: 'file' }]),
      assistant('a3', 'msg_1', { type: 'tool_use', id: 't2', name: 'Read', input: {} }),
      user('u3', [{ type: 'tool_result', tool_use_id: 't2', content: 'file' }]),
      assistant('a4', 'msg_2', { type: 'text', text: 'done' }),
    ];
    // fix it, response msg_1, two tool results, response msg_2
    expect(count(claudeCode, lines)).toBe(5);
    for (const piece of [1, 2, 3]) expect(count(claudeCode, lines, '', piece)).toBe(5);
  });

  it('assistant lines without a message id count one each', () => {
    expect(count(claudeCode, [assistant('a1', undefined, { type: 'text', text: 'x' }), assistant('a2', undefined, { type: 'text', text: 'y' })])).toBe(2);
  });

  it('injected context, compaction summaries, inline subagent lines, other line types and other files do not count', () => {
    const lines = [
      L({ type: 'summary', summary: 'user asked', leafUuid: 'x' }),
      L({ type: 'file-history-snapshot', messageId: 'm', snapshot: { messageId: 'm', trackedFileBackups: {} } }),
      user('m1', 'Caveat: the messages below were generated by the user while running local commands', { isMeta: true }),
      user('c1', 'This session is being continued from a previous conversation', { isCompactSummary: true }),
      user('s1', 'Warmup', { isSidechain: true }),
      assistant('s2', 'msg_s', { type: 'text', text: 'ok' }, { isSidechain: true }),
      L({ type: 'system', subtype: 'compact_boundary', uuid: 'b1', content: 'Conversation compacted' }),
      L({ type: 'progress', uuid: 'p1', data: { type: 'hook_progress', message: 'user' } }),
      L({ type: 'last-prompt', lastPrompt: 'assistant', leafUuid: 'x' }),
      L({ type: 'user', uuid: 'n1' }), // no message: not a message line
      '{"type":"user","message":', // not JSON
    ];
    expect(count(claudeCode, lines)).toBe(0);
    // A subagent's file, and a tool-result file, hold lines of their own: never the session's messages.
    expect(count(claudeCode, [user('u1', 'hi'), assistant('a1', 'msg_1', { type: 'text', text: 'x' })], 'agent-0c4c3cf8.jsonl')).toBe(0);
    expect(count(claudeCode, ['{"type":"user","message":{"role":"user","content":"x"}}'], 'sess/tool-results/toolu_01.txt')).toBe(0);
  });
});

describe('Codex: what counts as a message', () => {
  const item = (payload: object) => L({ timestamp: '2026-01-01T00:00:00.000Z', type: 'response_item', payload });
  const event = (payload: object) => L({ timestamp: '2026-01-01T00:00:00.000Z', type: 'event_msg', payload });
  const text = (role: string, t: string) => item({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: t }] });

  it('a typed user message, each tool output and each model response (however many items it has) count one each', () => {
    const lines = [
      L({ timestamp: '2026-01-01T00:00:00.000Z', type: 'session_meta', payload: { id: 'x', cwd: '/p' } }),
      text('developer', '<permissions instructions>'),
      text('user', '<environment_context>\n  <cwd>/p</cwd>\n</environment_context>'),
      text('user', '# AGENTS.md instructions for /p\n\nbe brief'),
      text('user', 'fix the test'),
      event({ type: 'user_message', message: 'fix the test' }), // the UI's copy of the message above
      L({ timestamp: '2026-01-01T00:00:00.000Z', type: 'turn_context', payload: { cwd: '/p', model: 'm' } }),
      item({ type: 'reasoning', summary: [], encrypted_content: 'x' }),
      item({ type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c1' }),
      item({ type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c2' }),
      event({ type: 'token_count' }),
      item({ type: 'function_call_output', call_id: 'c1', output: 'ok' }),
      item({ type: 'function_call_output', call_id: 'c2', output: 'ok' }),
      item({ type: 'reasoning', summary: [], encrypted_content: 'y' }),
      item({ type: 'web_search_call', action: { query: 'q' } }),
      text('assistant', 'fixed'),
      event({ type: 'agent_message', message: 'fixed' }),
      item({ type: 'ghost_snapshot', ghost_commit: {} }),
      item({ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'data:' }] }),
      item({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' }),
      item({ type: 'custom_tool_call_output', output: 'done' }),
      'not json "response_item"',
    ];
    // fix the test, response 1 (reasoning and two calls), two outputs, response 2 (reasoning, search, text), the image,
    // response 3 (a patch), its output
    expect(count(codex, lines)).toBe(8);
    for (const piece of [1, 2, 5]) expect(count(codex, lines, '', piece)).toBe(8);
  });
});

describe('pi: every message entry counts', () => {
  it('whatever its role; other entries do not', () => {
    const e = (type: string, more: object = {}) => L({ type, id: Math.random().toString(36).slice(2, 10), parentId: null, timestamp: '2026-01-01T00:00:00.000Z', ...more });
    const lines = [
      e('message', { message: { role: 'user', content: 'x' } }),
      e('message', { message: { role: 'assistant', content: [] } }),
      e('message', { message: { role: 'toolResult', content: [] } }),
      e('model_change', { provider: 'p', modelId: 'm' }),
      e('compaction', { summary: 's', firstKeptEntryId: 'x', tokensBefore: 1 }),
      e('session_info', { name: 'n' }),
    ];
    expect(count(pi, lines)).toBe(3);
  });
});
