// Bundles the CLI into one ESM file so `sessync` starts fast without a TypeScript loader.
// Every file in cli/commands/ is a command named after the file; the registry is generated here.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
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

await build({
  entryPoints: [join(root, 'cli/main.ts')],
  outfile: join(root, 'dist/cli.mjs'),
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
