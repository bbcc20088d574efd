// `npm run bench`: runs every bench/*.bench.ts in one process and prints their tables of ratios.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

/** One measured row: the subject, its baseline in the same run, and the goal it must meet. */
export interface BenchRow {
  name: string;
  value: string;
  baseline?: string;
  ratio?: number;
  goal?: string;
  pass?: boolean;
}

export interface Bench {
  title: string;
  run(): Promise<BenchRow[]>;
}

// The agents' own folders point nowhere unless a bench gives one (as in the tests): sync commands work on pi's and
// Claude Code's and Codex's folders when they exist, and a bench must never read or write those of whoever runs it.
process.env.PI_CODING_AGENT_DIR = '/nonexistent/sessync-bench-no-pi';
process.env.CLAUDE_CONFIG_DIR = '/nonexistent/sessync-bench-no-claude';
process.env.CODEX_HOME = '/nonexistent/sessync-bench-no-codex';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

let failed = 0;
for (const f of files) {
  const mod = (await import(pathToFileURL(join(dir, f)).href)) as { default: Bench };
  const bench = mod.default;
  console.log(`\n## ${bench.title} (${f})`);
  const rows = await bench.run();
  console.log('| measure | value | baseline | ratio | goal | met |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    if (r.pass === false) failed++;
    console.log(`| ${r.name} | ${r.value} | ${r.baseline ?? ''} | ${r.ratio === undefined ? '' : r.ratio.toFixed(2) + 'x'} | ${r.goal ?? ''} | ${r.pass === undefined ? '' : r.pass ? 'yes' : 'NO'} |`);
  }
}
console.log(failed ? `\n${failed} goal(s) not met` : '\nall goals met');
