// Child process for the concurrency tests: appends N entries one call at a time at the leaf, or holds the lock forever.
// Usage: node --import tsx append-worker.ts append <file> <count> <tag> | hold <file>
import { withFileLock } from '../../cli/store/file-lock.js';
import { appendWith } from '../../cli/store/session-writer.js';
import { completeEntries } from '../../cli/store/new-entry.js';

const [mode, file, count, tag] = process.argv.slice(2);
if (mode === 'hold') {
  await withFileLock(file!, async () => {
    process.stdout.write('held\n');
    await new Promise(() => setInterval(() => undefined, 1_000)); // until killed (the timer keeps the process alive)
  });
} else {
  for (let i = 0; i < Number(count); i++) {
    await appendWith(file!, (view) => completeEntries(view, [{ type: 'message', message: { role: 'user', content: `${tag}-${i}` } }]));
  }
}
