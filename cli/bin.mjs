#!/usr/bin/env node
// Launcher for the `sessync` bin: runs the bundled CLI, building it first when it is missing.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist/cli.mjs');
if (!existsSync(bundle) || process.env.SESSYNC_REBUILD === '1') {
  await import(pathToFileURL(join(root, 'scripts/build.mjs')).href);
}
const { main } = await import(pathToFileURL(bundle).href);
process.exitCode = await main(process.argv.slice(2));
