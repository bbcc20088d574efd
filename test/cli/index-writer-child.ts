// Child process for the session-index tests: a second writer of a session file (pi's own SessionManager, or a plain
// appender that also keeps the index up to date after each line, to be killed -9 at any moment).
// Usage: node --import tsx index-writer-child.ts pi <file> <count> | appender <file> <count>
import { appendFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SessionManager } from '@mariozechner/pi-coding-agent';
import { sessionFileIndex } from '../../cli/store/session-file-index.js';

const [mode, file, count] = process.argv.slice(2);
const n = Number(count);
if (mode === 'pi') {
  const sm = SessionManager.open(file!, dirname(file!));
  for (let i = 0; i < n; i++) {
    sm.appendMessage({ role: 'user', content: `pi-${i}`, timestamp: Date.now() });
    sm.appendMessage({
      role: 'assistant',
      content: [{ type: 'text', text: `reply-${i}` }],
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: `pi-model-${i}`,
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: 'stop',
      timestamp: Date.now(),
    });
  }
} else {
  let parent = process.argv[5] ?? null;
  for (let i = 0; i < n; i++) {
    const id = `w${process.pid}-${i}`;
    // Large lines, so that the index batch and the session write take long enough to be cut by the kill.
    appendFileSync(file!, JSON.stringify({ type: 'message', id, parentId: parent, timestamp: new Date(Date.UTC(2026, 1, 1) + i).toISOString(), message: { role: 'user', content: 'x'.repeat(20_000 + i) } }) + '\n');
    parent = id;
    await sessionFileIndex(file!);
    if (i === 2) process.stdout.write('running\n');
  }
}
