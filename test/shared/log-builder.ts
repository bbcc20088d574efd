// Test helper: builds small session logs (header + entries with explicit ids, parents and increasing timestamps).
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { serializeLine } from '../../shared/jsonl.js';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PI_V1_DIR = join(REPO_ROOT, '..', 'shared', 'fixtures', 'pi-v1');

export function header(over: Partial<SessionHeader> = {}): SessionHeader {
  return { type: 'session', version: 3, id: 'sess-1', timestamp: '2026-01-01T10:00:00.000Z', cwd: '/repo', ...over };
}

/** Builds entries whose timestamps increase by one second per entry, in creation order. */
export class LogBuilder {
  readonly entries: SessionEntry[] = [];
  private clock = Date.parse('2026-01-01T10:00:00.000Z');

  add(id: string, parentId: string | null, type: string, fields: Record<string, unknown> = {}): SessionEntry {
    this.clock += 1000;
    const e: SessionEntry = { type, id, parentId, timestamp: new Date(this.clock).toISOString(), ...fields };
    this.entries.push(e);
    return e;
  }

  user(id: string, parentId: string | null, text: string): SessionEntry {
    return this.add(id, parentId, 'message', { message: { role: 'user', content: [{ type: 'text', text }], timestamp: this.clock } });
  }

  assistant(id: string, parentId: string | null, text: string, provider = 'anthropic', model = 'claude-sonnet-4-5'): SessionEntry {
    return this.add(id, parentId, 'message', {
      message: { role: 'assistant', content: [{ type: 'text', text }], provider, model, stopReason: 'stop', usage: { input: 1, output: 1 } },
    });
  }

  text(h: SessionHeader = header()): string {
    return [h, ...this.entries].map((x) => serializeLine(x) + '\n').join('');
  }
}

/** Text of a message for compact assertions: role + first text block. */
export function brief(m: unknown): string {
  const msg = m as { role: string; content?: unknown; summary?: string };
  if (typeof msg.summary === 'string') return `${msg.role}:${msg.summary}`;
  const c = msg.content;
  const t = typeof c === 'string' ? c : Array.isArray(c) ? ((c[0] as { text?: string } | undefined)?.text ?? '') : '';
  return `${msg.role}:${t}`;
}
