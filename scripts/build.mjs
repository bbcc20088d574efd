// Bundles the CLI into one ESM file so `sessync` starts fast without a TypeScript loader.
// Every file in cli/commands/ is a command named after the file; the registry is generated here.
// Runs as `prepack` (the package ships dist/, never the sources), before `npm start` and `npm run bench`,
// and in the test suites' global setup. Not as `prepare`: npm lists that as an install script of the
// published package and warns every user who installs it.
import { build } from 'esbuild';
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const commandsDir = join(root, 'cli/commands');

/** Resolves `sessync:commands` to `{ name: () => import('./commands/name.ts') }` for every command file. */
const commandRegistry = {
  name: 'command-registry',
  setup(b) {
    b.onResolve({ filter: /^sessync:commands$/ }, () => ({ path: 'commands', namespace: 'sessync' }));
    b.onLoad({ filter: /.*/, namespace: 'sessync' }, () => {
      const names = readdirSync(commandsDir)
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
        .map((f) => f.slice(0, -3))
        .sort();
      const lines = names.map((n) => `  ${JSON.stringify(n)}: () => import(${JSON.stringify(join(commandsDir, n + '.ts'))}),`);
      return { contents: `export const commands = {\n${lines.join('\n')}\n};\n`, loader: 'js', resolveDir: commandsDir };
    });
  },
};

// Build beside dist/ and swap it in, so a CLI process running meanwhile never loads a half-written file.
const out = join(root, `dist.tmp-${process.pid}`);
const old = join(root, `dist.old-${process.pid}`);
rmSync(out, { recursive: true, force: true });

await build({
  // dist/cli.mjs for the `sessync` bin; dist/server.mjs for self-hosting the service on Node (see README).
  entryPoints: { cli: join(root, 'cli/main.ts'), server: join(root, 'worker/node-entry.ts') },
  // Split per command so a command loads only its own imports (startup stays well under 300 ms).
  outdir: out,
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  splitting: true,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
  plugins: [commandRegistry],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});

try {
  renameSync(join(root, 'dist'), old);
} catch (e) {
  if (e.code !== 'ENOENT') throw e;
}
renameSync(out, join(root, 'dist'));
rmSync(old, { recursive: true, force: true });
