// Claude Code's adapter: the conformance suite on every real Claude Code fixture, and the folder-name rules.
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCode, claudeProjectFolder, javaStringHash } from '../../shared/agents/claude-code.js';
import { agentConformance, type SessionSample } from './agent.case.js';
import { fixtureFiles, read } from './fixture-samples.js';

const files = fixtureFiles('claude-code');
const AGENT_FILE = 'lanegrid__agtrace__claude_agent.jsonl';

function sessionIdIn(text: string): string {
  const m = /"sessionId":"([0-9a-f-]{36})"/.exec(text);
  if (!m) throw new Error('fixture without a sessionId');
  return m[1]!;
}

const samples: SessionSample[] = [];
for (const path of files) {
  const name = basename(path);
  if (name === AGENT_FILE) continue; // travels with its main file below
  const text = read(path);
  const session = sessionIdIn(text);
  const s: SessionSample = { name, session, files: [{ file: { rel: `${session}.jsonl`, kind: 'main' }, text }] };
  const agent = files.find((f) => basename(f) === AGENT_FILE);
  if (name === 'lanegrid__agtrace__claude_session.jsonl' && agent) {
    const at = read(agent);
    s.files.push({ file: { rel: `agent-${/"agentId":"([0-9a-f]+)"/.exec(at)![1]}.jsonl`, kind: 'subagent' }, text: at });
    // A 2.1-style layout too: a subagent under <session>/subagents and a large tool result under <session>/tool-results.
    s.files.push({ file: { rel: `${session}/subagents/agent-acompact-1a2b3c.jsonl`, kind: 'subagent' }, text: at });
    s.files.push({ file: { rel: `${session}/tool-results/toolu_01abc.txt`, kind: 'tool-result' }, text: 'line one\nline two without a newline' });
  }
  samples.push(s);
}

const S = '7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9';
const OTHER = '11111111-2222-3333-4444-555555555555';
agentConformance({
  agent: claudeCode,
  samples,
  pinsLeaf: true,
  keepsFileOrder: true,
  files: [
    {
      session: S,
      rels: [
        `${OTHER}.jsonl`,
        `${S}/tool-results/b.txt`,
        `${S}/subagents/agent-a1b2c3d4.jsonl`,
        `${S}.jsonl`,
        'agent-0c4c3cf8.jsonl',
        'agent-99999999.jsonl',
        `${OTHER}/subagents/agent-ffffffff.jsonl`,
        `${S}/subagents/agent-acompact-0f0f.jsonl`,
        `${S}/tool-results/a.txt`,
        `${S}/../../etc/passwd`,
        'notes.txt',
      ],
      firstLines: new Map([
        ['agent-0c4c3cf8.jsonl', `{"parentUuid":null,"isSidechain":true,"sessionId":"${S}","agentId":"0c4c3cf8","type":"user","uuid":"u1"}`],
        ['agent-99999999.jsonl', `{"parentUuid":null,"isSidechain":true,"sessionId":"${OTHER}","agentId":"99999999","type":"user","uuid":"u2"}`],
      ]),
      expect: [
        { rel: `${S}.jsonl`, kind: 'main' },
        { rel: `${S}/subagents/agent-a1b2c3d4.jsonl`, kind: 'subagent' },
        { rel: `${S}/subagents/agent-acompact-0f0f.jsonl`, kind: 'subagent' },
        { rel: `${S}/tool-results/a.txt`, kind: 'tool-result' },
        { rel: `${S}/tool-results/b.txt`, kind: 'tool-result' },
        { rel: 'agent-0c4c3cf8.jsonl', kind: 'subagent' },
      ],
    },
    // A folder with only the subagent files of a session: they are still found (the caller reports the missing main file).
    { session: OTHER, rels: [`${OTHER}/subagents/agent-ffffffff.jsonl`], expect: [{ rel: `${OTHER}/subagents/agent-ffffffff.jsonl`, kind: 'subagent' }] },
  ],
});

describe('Claude Code folders', () => {
  it('CLAUDE_CONFIG_DIR first, then HOME', () => {
    expect(claudeCode.sessionsRoot({ CLAUDE_CONFIG_DIR: '/cfg/claude/' }, '/home/me')).toBe('/cfg/claude/projects');
    expect(claudeCode.sessionsRoot({ CLAUDE_CONFIG_DIR: '' }, '/home/me')).toBe('/home/me/.claude/projects');
    expect(claudeCode.sessionsRoot({}, '/home/me/')).toBe('/home/me/.claude/projects');
  });

  it('every UTF-16 unit outside [A-Za-z0-9] becomes -, an emoji two of them', () => {
    expect(claudeProjectFolder('/a.b-c_d e')).toBe('-a-b-c-d-e');
    expect(claudeProjectFolder('/tmp/x😀y')).toBe('-tmp-x--y');
    expect(claudeProjectFolder('/tmp/cctry-rm1I6V/proj.a_b')).toBe('-tmp-cctry-rm1I6V-proj-a-b'); // written by claude 2.1.328
  });

  it('a name over 200 characters: the first 200, -, and the base-36 Java hash of the cwd (as claude 2.1.328 names it)', () => {
    const cwd = `/tmp/cclong/${Array.from({ length: 9 }, (_, i) => `seg${i}.long_folder name 😀`).join('/')}`;
    // The folder the real claude made for this cwd.
    expect(claudeProjectFolder(cwd)).toBe(
      '-tmp-cclong-seg0-long-folder-name----seg1-long-folder-name----seg2-long-folder-name----seg3-long-folder-name----seg4-long-folder-name----seg5-long-folder-name----seg6-long-folder-name----seg7-long-fol-7hglba',
    );
    expect(javaStringHash('hello')).toBe(99162322); // "hello".hashCode() in Java
    expect(claudeProjectFolder('/' + 'x'.repeat(199))).toBe('-' + 'x'.repeat(199));
    expect(claudeProjectFolder('/' + 'x'.repeat(200))).toHaveLength(200 + 1 + Math.abs(javaStringHash('/' + 'x'.repeat(200))).toString(36).length);
  });

  it('a line travels as an entry and comes back byte-exact; an entry naming a path outside the folder is refused', () => {
    const file = { rel: `${S}.jsonl`, kind: 'main' as const };
    const text = '{"type":"user","uuid":"u-1","parentUuid":null,"message":{"role":"user","content":"é  spaced"},"timestamp":"2025-01-01T00:00:00Z"}\n';
    const [line] = claudeCode.parseFile(text, file).lines;
    const back = claudeCode.fromEntry(JSON.parse(JSON.stringify(claudeCode.toEntry(line!, file))));
    expect(back).toEqual({ rel: '', text: text.slice(0, -1) });
    expect(claudeCode.fromEntry({ type: 'agent_line', id: 'x', parentId: null, timestamp: '', file: '../../.bashrc', line: 'x' })).toBeNull();
    expect(claudeCode.fromEntry({ type: 'agent_line', id: 'x', parentId: null, timestamp: '', file: '', line: 'a\nb' })).toBeNull();
    expect(claudeCode.fromEntry({ type: 'message', id: 'x', parentId: null, timestamp: '' })).toBeNull();
  });

  it('the leaf: the last last-prompt naming a line of the file, else the last line of the conversation', () => {
    const file = { rel: `${S}.jsonl`, kind: 'main' as const };
    const L = (o: object) => JSON.stringify(o);
    const text = [
      L({ type: 'user', uuid: 'a', parentUuid: null, timestamp: '2025-01-01T00:00:01Z' }),
      L({ type: 'assistant', uuid: 'b', parentUuid: 'a', timestamp: '2025-01-01T00:00:02Z' }),
      L({ type: 'assistant', uuid: 'c', parentUuid: 'a', timestamp: '2025-01-01T00:00:03Z' }),
      L({ type: 'last-prompt', lastPrompt: 'hi', leafUuid: 'b', sessionId: S }),
      L({ type: 'last-prompt', lastPrompt: 'gone', leafUuid: 'zzz', sessionId: S }),
      L({ type: 'user', uuid: 's', parentUuid: null, isSidechain: true, timestamp: '2025-01-01T00:00:09Z' }),
      '',
    ].join('\n');
    const lines = claudeCode.parseFile(text, file).lines;
    expect(claudeCode.leaf(lines)).toBe('b');
    expect(claudeCode.leaf(lines.filter((l) => l.value.type !== 'last-prompt'))).toBe('c');
    // Two machines' last-prompts: the newer tip wins, and pinning it makes claude agree.
    const both = text + L({ type: 'last-prompt', lastPrompt: 'x', leafUuid: 'c', sessionId: S }) + '\n' + L({ type: 'last-prompt', lastPrompt: 'hi', leafUuid: 'b', sessionId: S }) + '\n';
    const bl = claudeCode.parseFile(both, file).lines;
    expect(claudeCode.syncLeaf(bl)).toBe('c');
    const pin = claudeCode.pinLeaf(bl, 'c', S);
    expect(pin).toEqual([L({ type: 'last-prompt', lastPrompt: 'x', leafUuid: 'c', sessionId: S })]);
    expect(claudeCode.leaf(claudeCode.parseFile(both + pin[0] + '\n', file).lines)).toBe('c');
    // The pinned line repeats bytes already in the file: it still gets an identity of its own.
    const ids = claudeCode.parseFile(both + pin[0] + '\n', file).lines.map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('renders text, thinking, tool calls and results, summaries and compaction; redaction sees the content fields', () => {
    const file = { rel: `${S}.jsonl`, kind: 'main' as const };
    const L = (o: object) => JSON.stringify(o);
    const text = [
      L({ type: 'user', uuid: 'a', parentUuid: null, message: { role: 'user', content: 'hello' } }),
      L({ type: 'assistant', uuid: 'b', parentUuid: 'a', message: { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'hi' }, { type: 'tool_use', name: 'Bash', input: { command: 'ls' } }] } }),
      L({ type: 'user', uuid: 'c', parentUuid: 'b', message: { role: 'user', content: [{ type: 'tool_result', content: 'a.txt' }] }, toolUseResult: { stdout: 'sk-ant-secret' } }),
      L({ type: 'system', subtype: 'compact_boundary', uuid: 'd', parentUuid: null, logicalParentUuid: 'c' }),
      L({ type: 'summary', summary: 'did things', leafUuid: 'c' }),
      '',
    ].join('\n');
    const lines = claudeCode.parseFile(text, file).lines;
    expect(lines.flatMap((l) => claudeCode.render(l)).map((p) => `${p.kind}:${p.text}`)).toEqual([
      'user:hello',
      'thinking:hmm',
      'assistant:hi',
      'tool_call:Bash {"command":"ls"}',
      'tool_result:a.txt',
      'system:conversation compacted',
      'summary:did things',
    ]);
    expect(JSON.stringify(claudeCode.redactionTargets(lines[2]!))).toContain('sk-ant-secret');
    expect(lines[3]!.parent).toBe('c'); // the compaction boundary continues the conversation it compacted
  });
});
