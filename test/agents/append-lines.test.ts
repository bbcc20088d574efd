// appendLines, the append to Claude Code and Codex files: never onto a last line the agent is still writing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendLines } from '../../cli/agents/claude-export.js';
import { isSessyncError } from '../../shared/errors.js';

describe('appendLines', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a file ending in a torn line (written since the caller looked): fs_busy, nothing appended', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sessync-append-lines-'));
    const path = join(dir, 'rollout.jsonl');
    const before = '{"type":"session_meta","n":1}\n{"type":"response_item","n":';
    writeFileSync(path, before);
    const e = await appendLines(path, ['{"type":"response_item","n":3}']).then(() => null, (x: unknown) => x);
    expect(isSessyncError(e, 'fs_busy'), String(e)).toBe(true);
    expect((e as { retryable: boolean }).retryable).toBe(true);
    expect((e as Error).message).toContain(path);
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('a whole file is appended to, and a missing one (and its folder) is made', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sessync-append-lines-'));
    const path = join(dir, 'main.jsonl');
    writeFileSync(path, '{"n":1}\n');
    await appendLines(path, ['{"n":2}', '{"n":3}']);
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
    const fresh = join(dir, 'sub', 'agent.jsonl');
    await appendLines(fresh, ['{"n":1}']);
    expect(readFileSync(fresh, 'utf8')).toBe('{"n":1}\n');
  });
});
