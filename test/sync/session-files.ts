// Session files written straight to disk in pi's layout, for sync tests that need many sessions quickly.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectDir, sessionFileName } from '../../cli/store/paths.js';
import { serializeLine } from '../../shared/jsonl.js';

/** A session file of `n` chained message entries under pi's layout; returns its path. */
export function writeSession(root: string, cwd: string, id: string, n: number): string {
  const header = { type: 'session', version: 3, id, timestamp: '2026-01-01T00:00:00.000Z', cwd };
  const lines = [serializeLine(header as never)];
  for (let i = 0; i < n; i++) {
    lines.push(serializeLine({ type: 'message', id: `${id.slice(0, 8)}-${i}`, parentId: i === 0 ? null : `${id.slice(0, 8)}-${i - 1}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i + 1)).toISOString(), message: { role: 'user', content: [{ type: 'text', text: `line ${i} of ${id}` }] } } as never));
  }
  const dir = projectDir(root, cwd);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, sessionFileName(header.timestamp, id));
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

