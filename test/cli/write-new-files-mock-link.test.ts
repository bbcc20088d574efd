// writeNewFiles with a mock of link(2) (no FAT/exFAT or FUSE mount here): where hard links are refused it creates
// each name exclusively, written whole; where the undo cannot remove a file, the error names it and never says that
// nothing was written.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { buildSharePayload } from '../../shared/share-payload.js';
import { writeClaudeImport } from '../../cli/agents/claude-share.js';
import { writeNewFiles } from '../../cli/store/write-new-files.js';
import { tempDir } from '../helpers/cli.js';

/** The mock: what link and unlink do instead of the real call, when set. */
const mock = vi.hoisted(() => ({
  link: null as ((from: string, to: string) => Promise<void>) | null,
  unlink: null as ((p: string) => Promise<void> | null) | null,
}));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const link = (from: string, to: string) => (mock.link ? mock.link(from, to) : real.link(from, to));
  const unlink = (p: string) => mock.unlink?.(p) ?? real.unlink(p);
  return { ...real, link, unlink, default: { ...real, link, unlink } };
});

const errno = (code: string, syscall: string, path: string) => Object.assign(new Error(`${code}: ${syscall} '${path}'`), { code, syscall, path });

const S = '12121212-3333-4444-8555-666666666666';
const header: SessionHeader = { type: 'session', version: 3, id: S, timestamp: '2026-01-01T00:00:00.000Z', cwd: '/x', agent: 'claude-code' };
const ccLine = (id: string, parentId: string | null, file: string, value: object): SessionEntry => ({ type: 'agent_line', agent: 'claude-code', id, parentId, timestamp: '', file, value });
const share = buildSharePayload(header, [
  ccLine('u1', null, '', { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi ✓' } }),
  ccLine('agent-a.s1', 'u1', `${S}/subagents/agent-a.jsonl`, { type: 'user', uuid: 's1', isSidechain: true, message: { role: 'user', content: 'sub' } }),
]);

describe('writeNewFiles, link(2) and unlink(2) mocked', () => {
  const t = tempDir('sessync-nolink-');
  afterAll(() => t.cleanup());
  afterEach(() => {
    mock.link = null;
    mock.unlink = null;
  });

  it.each(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'])('link refused with %s: the Claude Code import lands byte-identical, no temporary file left', async (code) => {
    const linkedHome = join(t.dir, `linked-${code}`);
    const plain = await writeClaudeImport(share, { CLAUDE_CONFIG_DIR: linkedHome }, '/home/me/proj');
    mock.link = async (_from, to) => {
      throw errno(code, 'link', to);
    };
    const home = join(t.dir, `nolink-${code}`);
    const r = await writeClaudeImport(share, { CLAUDE_CONFIG_DIR: home }, '/home/me/proj');
    // Each import gets a new session id: the same files and bytes once the ids are the same.
    const same = (s: string) => s.replaceAll(r.id, plain.id);
    const files = (root: string) => (readdirSync(root, { recursive: true }) as string[]).sort();
    expect(files(home).map(same)).toEqual(files(linkedHome));
    expect(files(home).some((f) => f.endsWith('.tmp'))).toBe(false);
    const jsonl = files(home).filter((f) => f.endsWith('.jsonl'));
    expect(jsonl).toHaveLength(2);
    for (const f of jsonl) expect(same(readFileSync(join(home, f), 'utf8')), f).toBe(readFileSync(join(linkedHome, same(f)), 'utf8'));
  });

  it('link refused and a name taken: conflict, the file there as it was, nothing of the call left', async () => {
    mock.link = async (_from, to) => {
      throw errno('EPERM', 'link', to);
    };
    const root = join(t.dir, 'nolink-taken');
    mkdirSync(root);
    writeFileSync(join(root, 'main.jsonl'), 'theirs\n');
    const e = await writeNewFiles([
      { path: join(root, 'sub', 'a.jsonl'), text: 'a\n' },
      { path: join(root, 'main.jsonl'), text: 'ours\n' },
    ]).then(() => null, (x: unknown) => x);
    expect(e).toMatchObject({ code: 'conflict', message: `${join(root, 'main.jsonl')} already exists; nothing was written` });
    expect(readdirSync(root, { recursive: true })).toEqual(['main.jsonl']);
    expect(readFileSync(join(root, 'main.jsonl'), 'utf8')).toBe('theirs\n');
  });

  it('a conflict whose undo cannot remove a linked file or a temporary file: both named, never "nothing was written"', async () => {
    const root = join(t.dir, 'stuck');
    mkdirSync(root);
    writeFileSync(join(root, 'main.jsonl'), 'theirs\n');
    const stuck: string[] = [];
    mock.unlink = (p) => {
      if (p !== join(root, 'a.jsonl') && !p.includes('.main.jsonl.')) return null;
      stuck.push(p);
      return Promise.reject(errno('EBUSY', 'unlink', p));
    };
    const e = await writeNewFiles([
      { path: join(root, 'a.jsonl'), text: 'a\n' },
      { path: join(root, 'main.jsonl'), text: 'ours\n' },
    ]).then(() => null, (x: Error) => x);
    expect(e).toMatchObject({ code: 'conflict' });
    expect(stuck).toHaveLength(2);
    for (const p of stuck) expect(e!.message).toContain(p);
    expect(e!.message).not.toContain('nothing was written');
  });

  it('an error that is not a file-system one, with a file left: internal, naming the file', async () => {
    const root = join(t.dir, 'bug');
    mock.link = async (from, to) => {
      if (to.endsWith('b.jsonl')) throw new TypeError('something unexpected');
      const { link } = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
      return link(from, to);
    };
    mock.unlink = (p) => (p === join(root, 'a.jsonl') ? Promise.reject(errno('EBUSY', 'unlink', p)) : null);
    const e = await writeNewFiles([
      { path: join(root, 'a.jsonl'), text: 'a\n' },
      { path: join(root, 'b.jsonl'), text: 'b\n' },
    ]).then(() => null, (x: Error) => x);
    expect(e).toMatchObject({ code: 'internal' });
    expect(e!.message).toContain('something unexpected');
    expect(e!.message).toContain(join(root, 'a.jsonl'));
    expect(e!.message).not.toContain('nothing was written');
  });
});
