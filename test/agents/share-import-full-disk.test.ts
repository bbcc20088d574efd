// Import of a Claude Code or Codex share on a disk that fills up mid-import (a small tmpfs, root only): whole or
// nothing. A failure is fs_full naming the file or folder, and leaves no new file, folder or partial line in the
// agent's folder; the files that were there stay byte for byte as they were.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { buildSharePayload } from '../../shared/share-payload.js';
import { writeClaudeImport } from '../../cli/agents/claude-share.js';
import { writeCodexImport } from '../../cli/agents/codex-import.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';

const S = '12121212-3333-4444-8555-666666666666';
const header: SessionHeader = { type: 'session', version: 3, id: S, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/x', agent: 'claude-code' };
const ccLine = (id: string, parentId: string | null, file: string, value: object): SessionEntry => ({ type: 'agent_line', agent: 'claude-code', id, parentId, timestamp: '', file, value });
/** A share whose subagent file (written first) fits in 24 KiB and whose main file (written last) does not. */
const claudeShare = buildSharePayload(header, [
  ccLine('u1', null, '', { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'lorem ipsum '.repeat(3000) } }),
  ccLine('a1', 'u1', '', { type: 'assistant', uuid: 'a1', parentUuid: 'u1', message: { role: 'assistant', content: 'dolor sit amet '.repeat(3000) } }),
  ccLine('agent-a.s1', 'a1', `${S}/subagents/agent-a.jsonl`, { type: 'user', uuid: 's1', isSidechain: true, message: { role: 'user', content: 'sub '.repeat(1000) } }),
]);

const OLD = '019b04ae-b1c6-7c72-a134-a4c2de66058c';
const META = `{"timestamp":"2025-12-09T19:55:16.336Z","type":"session_meta","payload":{"id":"${OLD}","timestamp":"2025-12-09T19:55:16.295Z","cwd":"/there","originator":"codex_cli_rs","cli_version":"0.66.0","source":"cli"}}`;
const codexLines = [META, ...[1, 2, 3].map((n) => JSON.stringify({ timestamp: '2025-12-09T19:55:18.144Z', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `${n} `.repeat(10_000) }] } }))];
const codexShare = buildSharePayload(
  { type: 'session', version: 3, id: OLD, timestamp: '2025-12-09T19:55:16.295Z', cwd: '/there', agent: 'codex' },
  codexLines.map((line, i): SessionEntry => ({ type: 'agent_line', agent: 'codex', id: `x-${i}`, parentId: i > 0 ? `x-${i - 1}` : null, timestamp: '', file: '', value: JSON.parse(line), line })),
);
const NOW = new Date(2026, 0, 2, 3, 4, 5);

/** Every file and folder under `root` with each file's bytes: what must be the same after a failed import. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of (readdirSync(root, { recursive: true }) as string[]).sort()) {
    const p = join(root, rel);
    out[rel] = statSync(p).isDirectory() ? '<folder>' : readFileSync(p, 'latin1');
  }
  return out;
}

/** Fills the disk of `dir`, then frees `free` bytes of it (whole pages); the filler is removed after the test. */
let fillers: string[] = [];
function fillUpTo(dir: string, free: number): void {
  const filler = join(dir, 'filler');
  fillers.push(filler);
  truncateSync(filler, Math.max(0, fill(filler) - free));
}
afterEach(() => {
  for (const f of fillers) rmSync(f, { force: true });
  fillers = [];
});

/** What `p` rejects with, or null when it resolves. */
function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

function expectFull(e: unknown, under: string): void {
  expect(e).toBeInstanceOf(SessyncError);
  expect(e).toMatchObject({ code: 'fs_full', retryable: true });
  expect((e as Error).message).toContain(under);
  expect((e as Error).message).toContain('nothing was written');
}

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`share-import-full-disk: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('import of a Claude Code share on a disk that fills up', () => {
  const disk = useTmpfs('256k');
  const cwd = '/home/me/proj';

  it('the subagent file fits, the main file does not: fs_full, and the project folder as it was', async () => {
    const claude = join(disk.dir, 'claude-a');
    const folder = join(claude, 'projects', claudeProjectFolder(cwd));
    mkdirSync(join(folder, 'aaaaaaaa-3333-4444-8555-666666666666', 'subagents'), { recursive: true });
    writeFileSync(join(folder, 'aaaaaaaa-3333-4444-8555-666666666666.jsonl'), '{"type":"user","uuid":"o1"}\n');
    writeFileSync(join(folder, 'aaaaaaaa-3333-4444-8555-666666666666', 'subagents', 'agent-b.jsonl'), '{"type":"user","uuid":"o2"}\n');
    const before = snapshot(claude);
    fillUpTo(disk.dir, 24 * 1024);
    const e = await rejection(writeClaudeImport(claudeShare, { CLAUDE_CONFIG_DIR: claude }, cwd));
    expectFull(e, folder);
    expect((e as Error).message).not.toContain('subagents'); // that file fitted: the main file is the one that did not
    expect(snapshot(claude)).toEqual(before); // no new file, folder or temporary file; the old ones byte for byte
  });

  it('a project folder that was not there: fs_full, and no folder left behind', async () => {
    const claude = join(disk.dir, 'claude-b');
    mkdirSync(join(claude, 'projects'), { recursive: true });
    fillUpTo(disk.dir, 4096);
    const e = await rejection(writeClaudeImport(claudeShare, { CLAUDE_CONFIG_DIR: claude }, cwd));
    expectFull(e, join(claude, 'projects', claudeProjectFolder(cwd)));
    expect(readdirSync(join(claude, 'projects'))).toEqual([]);
  });

  it('with room again, the same import is written whole', async () => {
    const claude = join(disk.dir, 'claude-c');
    const r = await writeClaudeImport(claudeShare, { CLAUDE_CONFIG_DIR: claude }, cwd);
    expect(readFileSync(r.path, 'utf8').split('\n')).toHaveLength(3);
    expect(readFileSync(join(r.path.replace(/\.jsonl$/, ''), 'subagents', 'agent-a.jsonl'), 'utf8')).toMatch(/^\{.*\}\n$/);
  });
});

describe.skipIf(unavailable !== null)('import of a Codex share on a disk that fills up', () => {
  const disk = useTmpfs('256k');

  it('the rollout does not fit: fs_full naming it, no date folder left, the rollouts there byte for byte', async () => {
    const codexHome = join(disk.dir, 'codex-a');
    const old = join(codexHome, 'sessions', '2025', '12', '09', `rollout-2025-12-09T19-55-16-${OLD}.jsonl`);
    mkdirSync(join(old, '..'), { recursive: true });
    writeFileSync(old, `${META}\n`);
    const before = snapshot(codexHome);
    fillUpTo(disk.dir, 8192);
    const e = await rejection(writeCodexImport(codexShare, { CODEX_HOME: codexHome }, '/home/me/proj', NOW));
    expectFull(e, join(codexHome, 'sessions', '2026', '01', '02', 'rollout-2026-01-02T03-04-05-'));
    expect(snapshot(codexHome)).toEqual(before);
  });

  it('no inode left for the last date folder: fs_full naming it (not ENOENT), and the folders made before it removed', async () => {
    const codexHome = join(disk.dir, 'codex-b');
    mkdirSync(join(codexHome, 'sessions'), { recursive: true });
    const before = snapshot(codexHome);
    // Room for two more folders (2026, 2026/01): 2026/01/02 is the one that cannot be made.
    const st = statfsSync(disk.dir);
    execFileSync('mount', ['-o', `remount,nr_inodes=${st.files - st.ffree + 2}`, disk.dir]);
    try {
      const e = await rejection(writeCodexImport(codexShare, { CODEX_HOME: codexHome }, '/home/me/proj', NOW));
      expectFull(e, `cannot create the folder ${join(codexHome, 'sessions', '2026', '01', '02')}:`);
      expect(snapshot(codexHome)).toEqual(before);
    } finally {
      execFileSync('mount', ['-o', 'remount,nr_inodes=10000', disk.dir]);
    }
  });
});
