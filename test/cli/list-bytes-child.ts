// Child process for the list test: lists a project's sessions cold and prints the bytes list read (its sync and async file reads, counted).
// Usage: node --import tsx list-bytes-child.ts <root> <cwd>
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';

// Counted around node:fs itself (not /proc/self/io: the module loader's thread reads files in the same process).
let read = 0;
const size = (r: unknown) => (typeof r === 'number' ? r : typeof r === 'string' ? Buffer.byteLength(r) : Buffer.isBuffer(r) ? r.length : 0);
const wrap = <T extends object>(mod: T, names: string[]) => {
  for (const name of names) {
    const orig = (mod as Record<string, (...a: unknown[]) => unknown>)[name]!;
    (mod as Record<string, unknown>)[name] = function (this: unknown, ...a: unknown[]) {
      const r = orig.apply(this, a);
      if (r instanceof Promise) return r.then((v) => ((read += size(v)), v));
      read += size(r);
      return r;
    };
  }
};
wrap(fs, ['readSync', 'readFileSync']);
wrap(fsp, ['readFile']);
syncBuiltinESMExports();

const { listSessions } = await import('../../cli/store/session-index.js');
const [root, cwd] = process.argv.slice(2);
const rows = await listSessions({ root: root!, realCwd: cwd! });
process.stdout.write(JSON.stringify({ read, rows: rows.map((r) => ({ id: r.id, lastEntryAt: r.lastEntryAt })) }) + '\n');
