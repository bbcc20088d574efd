// The store's writer on its own: a missing file is never created by an append; create never replaces a file.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendEntries, createSessionFile } from '../../cli/store/session-writer.js';
import { useTempHome } from '../helpers/cli.js';

const home = useTempHome('sessync-writer-', { beforeEach, afterEach });

const header = { type: 'session' as const, version: 3, id: 'sess', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/p' };
const entry = { type: 'message', id: 'e1', parentId: null, timestamp: '2026-01-01T00:00:01.000Z', message: { role: 'user', content: 'x' } };

describe('session writer', () => {
  it('appending to a missing file fails with not_found and creates nothing', async () => {
    const file = join(home.dir, 'missing.jsonl');
    await expect(appendEntries(file, [entry])).rejects.toMatchObject({ code: 'not_found' });
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('create refuses to replace an existing file; an old-format file is not appended to', async () => {
    const file = join(home.dir, 'p', 's.jsonl');
    await createSessionFile(file, header, [entry]);
    const bytes = readFileSync(file);
    await expect(createSessionFile(file, { ...header, id: 'other' })).rejects.toMatchObject({ code: 'conflict' });
    expect(readFileSync(file).equals(bytes)).toBe(true);
    const v1 = join(home.dir, 'v1.jsonl');
    writeFileSync(v1, JSON.stringify({ type: 'session', id: 'old', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/p' }) + '\n');
    await expect(appendEntries(v1, [entry])).rejects.toMatchObject({ code: 'unsupported_version' });
    expect(readFileSync(v1, 'utf8').split('\n')).toHaveLength(2);
  });
});
