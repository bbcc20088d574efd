// `sessync import <url>` of a Claude Code share through the real CLI, with Claude Code's folder on a small tmpfs (root
// only): a read-only mount is fs_readonly naming the project folder (not ENOENT), a disk that fills up mid-import is
// fs_full with nothing of the import left and the files there byte for byte as they were.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { claudeProjectFolder } from '../../shared/agents/claude-code.js';
import type { CliResult } from '../helpers/cli.js';
import { fill, tmpfsUnavailable, useTmpfs } from '../helpers/full-disk.js';
import { Machine, useServer } from '../sync/helpers.js';
import { ClaudeMachine, turn } from './claude-rig.js';

const SESSION = '5a5a5a5a-1111-4222-8333-444444444444';
const OTHER = 'bbbbbbbb-1111-4222-8333-444444444444';

/** The `--json` error document the CLI wrote on stderr. */
function jsonError(r: CliResult): { code: string; message: string; retryable: boolean } {
  return (JSON.parse(r.stderr.trim().split('\n').at(-1)!) as { error: ReturnType<typeof jsonError> }).error;
}

/** Every file and folder under `root` with each file's bytes. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of (readdirSync(root, { recursive: true }) as string[]).sort()) {
    const p = join(root, rel);
    out[rel] = statSync(p).isDirectory() ? '<folder>' : readFileSync(p, 'latin1');
  }
  return out;
}

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`claude-import-cli-disk: skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('sessync import of a Claude Code share onto a small disk', () => {
  const rig = useServer(undefined, 'sessync-ccdisk-');
  const full = useTmpfs('256k');
  const readOnly = useTmpfs('64k');
  let url = '';

  beforeAll(async () => {
    const a = new ClaudeMachine(rig.root, 'sharer');
    await a.login(rig.server);
    const cwd = realpathSync(a.project);
    // About 100 KB of main file, written last; a small subagent file, written first.
    a.write(`${SESSION}.jsonl`, turn(SESSION, cwd, null, 'lorem ipsum '.repeat(4000), ['a1111111-1111-4111-8111-111111111111', 'a2222222-2222-4222-8222-222222222222'], '2026-01-01T00:00:00.000Z'));
    a.write(`${SESSION}/subagents/agent-a1b2.jsonl`, JSON.stringify({ parentUuid: null, isSidechain: true, type: 'user', message: { role: 'user', content: 'Warmup' }, uuid: 'a3333333-3333-4333-8333-333333333333', timestamp: '2026-01-01T00:00:00.000Z', sessionId: SESSION }) + '\n');
    const shared = await a.ok(['share', SESSION.slice(0, 8), '--json']);
    url = (shared as { url: string }).url;
  }, 120_000);

  it('a disk that fills up mid-import: exit 1, fs_full naming the project folder, nothing of the import left', async () => {
    const claude = join(full.dir, 'claude');
    const b = new Machine(rig.root, 'importer-full', { env: { CLAUDE_CONFIG_DIR: claude } });
    const folder = join(claude, 'projects', claudeProjectFolder(realpathSync(b.project)));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${OTHER}.jsonl`), '{"type":"user","uuid":"o1"}\n');
    const before = snapshot(claude);
    const filler = join(full.dir, 'filler');
    truncateSync(filler, fill(filler) - 24 * 1024); // room for the subagent file, not for the main one
    try {
      const r = await b.run(['import', url, '--json']);
      expect(r.code, r.stderr).toBe(1);
      const err = jsonError(r);
      expect(err).toMatchObject({ code: 'fs_full', retryable: true });
      expect(err.message).toContain(folder);
      expect(err.message).not.toContain('subagents'); // that file fitted: the main file is the one that did not
      expect(err.message).toContain('nothing was written');
      expect(snapshot(claude)).toEqual(before);
    } finally {
      rmSync(filler);
    }
    // With room again, the same link imports whole.
    const ok = (await b.ok(['import', url, '--json'])) as { path: string; entryCount: number };
    expect(readFileSync(ok.path, 'utf8').split('\n').filter(Boolean)).toHaveLength(ok.entryCount);
  });

  it('a read-only mount: exit 1, fs_readonly naming the project folder it could not make, not ENOENT', async () => {
    const claude = join(readOnly.dir, 'claude');
    mkdirSync(join(claude, 'projects'), { recursive: true });
    execFileSync('mount', ['-o', 'remount,ro', readOnly.dir]);
    const b = new Machine(rig.root, 'importer-ro', { env: { CLAUDE_CONFIG_DIR: claude } });
    const r = await b.run(['import', url, '--json']);
    expect(r.code, r.stderr).toBe(1);
    const err = jsonError(r);
    expect(err).toMatchObject({ code: 'fs_readonly', retryable: false });
    expect(err.message).toContain(`cannot create the folder ${join(claude, 'projects', claudeProjectFolder(realpathSync(b.project)))}:`);
    expect(err.message).not.toContain('ENOENT');
  });
});
