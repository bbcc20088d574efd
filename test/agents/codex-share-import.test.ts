// Import of a Codex share from crafted payloads: the new rollout's name, folder and session_meta, exact lines, and
// bad shares refused with nothing written.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { codexLineText, writeCodexImport } from '../../cli/agents/codex-import.js';
import type { SessionEntry } from '../../shared/entry.js';
import { buildSharePayload } from '../../shared/share-payload.js';

const OLD = '019b04ae-b1c6-7c72-a134-a4c2de66058c';
const META = `{"timestamp":"2025-12-09T19:55:16.336Z","type":"session_meta","payload":{"id":"${OLD}","session_id":"${OLD}","timestamp":"2025-12-09T19:55:16.295Z","cwd":"~/agent-sample","originator":"codex_cli_rs","cli_version":"0.66.0","instructions":null,"source":"cli","model_provider":"openai","runtime_workspace_roots":["~/agent-sample"],"git":{"commit_hash":"1cea5ec4","branch":"codex"}}}`;
const USER = '{"timestamp":"2025-12-09T19:55:18.144Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}';
const TOKENS = '{"timestamp":"2025-12-09T19:55:24.726Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":0.0}}}}';

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

function home(): string {
  const d = mkdtempSync(join(tmpdir(), 'sessync-cximport-'));
  dirs.push(d);
  return join(d, 'codex');
}

function entry(line: string, i: number, extra: Partial<SessionEntry> = {}): SessionEntry {
  return { type: 'agent_line', agent: 'codex', id: `x-${i}`, parentId: i > 0 ? `x-${i - 1}` : null, timestamp: '', file: '', value: JSON.parse(line), line, ...extra };
}

function payload(entries: SessionEntry[], extra: Record<string, unknown> = {}) {
  return buildSharePayload({ type: 'session', id: OLD, timestamp: '2025-12-09T19:55:16.295Z', cwd: '~/agent-sample', agent: 'codex', ...extra }, entries);
}

function files(root: string): string[] {
  try {
    return (readdirSync(root, { recursive: true }) as string[]).filter((n) => n.endsWith('.jsonl') || n.endsWith('.tmp'));
  } catch {
    return [];
  }
}

describe('writeCodexImport', () => {
  it('writes rollout-<local time>-<new uuid>.jsonl in the local date folder: a new session_meta first, the other lines exact', async () => {
    const codexHome = home();
    const now = new Date(2026, 0, 2, 3, 4, 5); // local time, as Codex names its rollouts
    const r = await writeCodexImport(payload([META, USER, TOKENS].map((l, i) => entry(l, i))), { CODEX_HOME: codexHome }, '/home/me/here', now);
    expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/); // a uuid v7, as Codex's own ids
    expect(r.path).toBe(join(codexHome, 'sessions', '2026', '01', '02', `rollout-2026-01-02T03-04-05-${r.id}.jsonl`));
    const got = readFileSync(r.path, 'utf8').split('\n');
    expect(got).toHaveLength(4);
    expect(got[3]).toBe('');
    expect(got[1]).toBe(USER);
    expect(got[2]).toBe(TOKENS); // 0.0 stays 0.0: the exact line, not the value written out again
    const meta = JSON.parse(got[0]!);
    expect(meta).toEqual({
      timestamp: now.toISOString(),
      type: 'session_meta',
      payload: { id: r.id, timestamp: now.toISOString(), cwd: '/home/me/here', session_id: r.id, originator: 'codex_cli_rs', cli_version: '0.66.0', instructions: null, source: 'cli', runtime_workspace_roots: ['/home/me/here'] },
    });
    expect(r.entryCount).toBe(3);
  });

  it('a share made in a subfolder of its repository (cwdInProject) gets that subfolder here as its cwd; one that is not plain, the top', async () => {
    const codexHome = home();
    const repo = join(realpathSync(join(codexHome, '..')), 'repo');
    execFileSync('git', ['init', '-q', repo]);
    for (const d of ['pkg/web', 'x\\..\\..']) mkdirSync(join(repo, d), { recursive: true });
    const TURN = '{"timestamp":"2025-12-09T19:55:17.000Z","type":"turn_context","payload":{"cwd":"~/agent-sample/pkg/web","model":"m"}}';
    const cwds = async (sub: string) => {
      const r = await writeCodexImport(payload([META, TURN, USER].map((l, i) => entry(l, i)), { cwdInProject: sub }), { CODEX_HOME: codexHome }, repo);
      return readFileSync(r.path, 'utf8').split('\n').slice(0, 2).map((l) => (JSON.parse(l) as { payload: { cwd: string } }).payload.cwd);
    };
    // Seen failing on old code: the project's top for pkg/web too.
    expect(await cwds('pkg/web')).toEqual([join(repo, 'pkg', 'web'), join(repo, 'pkg', 'web')]);
    // The same guard as for Claude Code (a .git part, backslashes, a path outside the top): the project's top.
    for (const bad of ['.git/hooks', 'x\\..\\..', '../..', '/etc']) expect(await cwds(bad), bad).toEqual([repo, repo]);
  });

  it('a share without a session_meta (its first line was unreadable) still gets one', async () => {
    const codexHome = home();
    const r = await writeCodexImport(payload([USER].map((l, i) => entry(l, i))), { CODEX_HOME: codexHome }, '/w');
    const got = readFileSync(r.path, 'utf8').split('\n');
    expect(JSON.parse(got[0]!).payload).toMatchObject({ id: r.id, cwd: '/w', originator: 'codex_cli_rs', source: 'cli' });
    expect(got[1]).toBe(USER);
  });

  it('refuses a share holding another agent\'s entry, a pi entry or a line with a newline, writing nothing', async () => {
    const bad: SessionEntry[] = [
      { ...entry(USER, 1), agent: 'claude-code' },
      { type: 'message', id: 'p1', parentId: null, timestamp: '', message: { role: 'user', content: 'x' } },
      { type: 'agent_line', agent: 'codex', id: 'x-9', parentId: null, timestamp: '', file: '', line: 'not json\n{}' },
      { type: 'agent_line', agent: 'codex', id: 'x-9', parentId: null, timestamp: '', file: '', value: [1, 2] },
    ];
    for (const b of bad) {
      const codexHome = home();
      await expect(writeCodexImport(payload([entry(META, 0), b]), { CODEX_HOME: codexHome }, '/w')).rejects.toThrow(/is not a line of a Codex rollout; nothing was written/);
      expect(files(codexHome)).toEqual([]);
    }
  });
});

describe('codexLineText', () => {
  it('takes the exact line when it says what the value says, else the (redacted) value', () => {
    expect(codexLineText(entry(TOKENS, 0))!.text).toBe(TOKENS);
    const redacted = { ...entry(USER, 0), value: { ...JSON.parse(USER), payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '[REDACTED:openai_key]' }] } } };
    expect(codexLineText(redacted)!.text).toBe(JSON.stringify(redacted.value));
    const { value: _v, ...lineOnly } = entry(USER, 0);
    expect(codexLineText(lineOnly)!.text).toBe(USER);
  });
});
