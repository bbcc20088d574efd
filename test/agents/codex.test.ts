// Codex's adapter: the conformance suite on every real Codex rollout fixture, and the rules for folders, names and ids.
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codex, codexLineId, codexTravelling, entryOverLimit } from '../../shared/agents/codex.js';
import { agentConformance, type SessionSample } from './agent.case.js';
import { fixtureFiles, read } from './fixture-samples.js';

function sessionIdIn(text: string): string {
  const first = JSON.parse(text.slice(0, text.indexOf('\n'))) as { payload: { id: string } };
  return first.payload.id;
}

const samples: SessionSample[] = fixtureFiles('codex').map((path) => {
  const text = read(path);
  const session = sessionIdIn(text);
  return { name: basename(path), session, files: [{ file: { rel: codex.mainFile(session, '2025-12-09T19:55:16.336Z'), kind: 'main' }, text }] };
});

const S = '019b04ae-b1c6-7c72-a134-a4c2de66058c';
const OTHER = '019e1625-789d-76c0-80ab-3724b5ddb799';
agentConformance({
  agent: codex,
  samples,
  pinsLeaf: false,
  keepsFileOrder: true,
  forksOnDivergence: true,
  files: [
    {
      session: S,
      rels: [`2026/05/11/rollout-2026-05-11T11-26-55-${OTHER}.jsonl`, `2025/12/09/rollout-2025-12-09T20-55-16-${S}.jsonl`, 'notes.txt', `../rollout-x-${S}.jsonl`],
      expect: [{ rel: `2025/12/09/rollout-2025-12-09T20-55-16-${S}.jsonl`, kind: 'main' }],
    },
    { session: '11111111-2222-3333-4444-555555555555', rels: [`2025/12/09/rollout-2025-12-09T20-55-16-${S}.jsonl`], expect: [] },
  ],
});

const L = (o: object) => JSON.stringify(o);
const meta = (id: string, extra: object = {}) => L({ timestamp: '2025-12-09T19:55:16.336Z', type: 'session_meta', payload: { id, cwd: '/src/app', git: { branch: 'main', repository_url: 'git@github.com:o/app.git' }, ...extra } });
const msg = (t: string, ts = '2025-12-09T19:55:18.000Z') => L({ timestamp: ts, type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: t }] } });

describe('Codex folders, names and identity', () => {
  it('CODEX_HOME first, then HOME', () => {
    expect(codex.sessionsRoot({ CODEX_HOME: '/cfg/codex/' }, '/home/me')).toBe('/cfg/codex/sessions');
    expect(codex.sessionsRoot({ CODEX_HOME: '' }, '/home/me')).toBe('/home/me/.codex/sessions');
    expect(codex.sessionsRoot({}, '/home/me/')).toBe('/home/me/.codex/sessions');
  });

  it('a rollout is named sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl by its start time, and its name gives its id back', () => {
    const ts = new Date(2026, 4, 11, 11, 26, 55).toISOString(); // 11:26:55 local
    const rel = codex.mainFile(OTHER, ts);
    expect(rel).toBe(`2026/05/11/rollout-2026-05-11T11-26-55-${OTHER}.jsonl`);
    expect(codex.sessionOf(rel)).toBe(OTHER);
    expect(codex.sessionOf(`rollout-2026-05-11T11-26-55-${OTHER}.jsonl`)).toBeNull();
    expect(codex.sessionOf(`2026/05/11/rollout-2026-05-11T11-26-55-not-a-uuid.jsonl`)).toBeNull();
  });

  it('identity is a chain: the same line after another predecessor is another line; two machines with one prefix agree', () => {
    const file = { rel: codex.mainFile(S, '2025-12-09T19:55:16Z'), kind: 'main' as const };
    const a = codex.parseFile(`${meta(S)}\n${msg('one')}\n${msg('two')}\n`, file).lines;
    const b = codex.parseFile(`${meta(S)}\n${msg('two')}\n${msg('one')}\n`, file).lines;
    expect(a[0]!.id).toBe(b[0]!.id);
    expect(a[1]!.id).not.toBe(b[2]!.id);
    expect(a[1]!.id).toBe(codexLineId(S, a[0]!.id, msg('one')));
    expect(a.map((l) => l.parent)).toEqual([null, a[0]!.id, a[1]!.id]);
    // The same line twice in a row still gets two identities.
    const twice = codex.parseFile(`${meta(S)}\n${msg('x')}\n${msg('x')}\n`, file).lines;
    expect(new Set(twice.map((l) => l.id)).size).toBe(3);
    // Another session with the same lines has other identities.
    const other = codex.parseFile(`${meta(OTHER)}\n${msg('one')}\n`, file).lines;
    expect(other[1]!.id).not.toBe(a[1]!.id);
    expect(codex.leaf(a)).toBe(a[2]!.id);
  });

  it('project hints from session_meta: cwd, git branch and repository url', () => {
    const file = { rel: codex.mainFile(S, '2025-12-09T19:55:16Z'), kind: 'main' as const };
    expect(codex.projectHints(codex.parseFile(`${meta(S)}\n`, file))).toEqual({ cwd: '/src/app', gitBranch: 'main', gitUrl: 'git@github.com:o/app.git' });
    // No session_meta (a torn first write): the first line that names a cwd.
    const tc = L({ timestamp: 't', type: 'turn_context', payload: { cwd: '/elsewhere' } });
    expect(codex.projectHints(codex.parseFile(`${msg('a')}\n${tc}\n`, file)).cwd).toBe('/elsewhere');
  });

  it('a line travels as an entry and comes back byte-exact; other agents\' entries and multi-line text are refused', () => {
    const file = { rel: codex.mainFile(S, '2025-12-09T19:55:16Z'), kind: 'main' as const };
    const text = `${meta(S)}\n{"timestamp":"t", "type":"event_msg","payload":{"type":"agent_message","message":"é  x"}}\n`;
    const lines = codex.parseFile(text, file).lines;
    const back = codex.fromEntry(JSON.parse(JSON.stringify(codex.toEntry(lines[1]!, file))));
    expect(back).toEqual({ rel: '', text: text.split('\n')[1] });
    expect(codex.fromEntry({ type: 'agent_line', agent: 'claude-code', id: 'x', parentId: null, timestamp: '', file: '', line: 'x' })).toBeNull();
    expect(codex.fromEntry({ type: 'agent_line', agent: 'codex', id: 'x', parentId: null, timestamp: '', file: '', line: 'a\nb' })).toBeNull();
    expect(codex.fromEntry({ type: 'agent_line', agent: 'codex', id: 'x', parentId: null, timestamp: '', file: '../x', line: 'a' })).toBeNull();
  });

  it('a line too big to travel is left out of the chain: the lines after it get the identities a copy without it gives them', () => {
    const file = { rel: codex.mainFile(S, '2025-12-09T19:55:16Z'), kind: 'main' as const };
    const max = 4096;
    const big = msg('y'.repeat(max));
    // Escaping counts: a line of quotes is well under max characters, yet over max bytes as an entry.
    const quoted = msg('"'.repeat(max / 3));
    const here = codex.parseFile([meta(S), msg('one'), big, msg('two'), quoted, msg('three')].map((l) => `${l}\n`).join(''), file).lines;
    const there = codex.parseFile([meta(S), msg('one'), msg('two'), msg('three')].map((l) => `${l}\n`).join(''), file).lines;
    const t = codexTravelling(here, file, max);
    expect(t.over.map((o) => o.line.line)).toEqual([3, 5]);
    expect(t.over.every((o) => o.bytes > max)).toBe(true);
    expect(t.lines.map((l) => [l.id, l.parent, l.text])).toEqual(there.map((l) => [l.id, l.parent, l.text]));
    expect(t.lines.map((l) => l.line)).toEqual([1, 2, 4, 6]); // still named by their line in this file
    // Nothing too big: the parse as it is, line for line.
    expect(codexTravelling(there, file, max).lines).toEqual(there);
    expect(entryOverLimit(codex.toEntry(there[1]!, file), max)).toBeNull();
    expect(entryOverLimit(codex.toEntry(here[2]!, file), max)).toBeGreaterThan(max);
  });
});
