#!/usr/bin/env node
// Launcher for the `sessync` bin: runs the bundled CLI in dist/, which npm run build (and npm pack, npm start, npm test) produce.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/cli.mjs', import.meta.url);
// Nothing is compiled here: a user's install has no build tools, and starting must stay fast.
if (!existsSync(bundle)) {
  process.stderr.write(
    'sessync: the bundled CLI (dist/cli.mjs) is missing. In a checkout of sessync run `npm run build`' +
      ' (npm start and npm test do it too); an installed package always has it, so reinstall it (npm i -g sessync).\n',
  );
  process.exit(1);
}
const { main } = await import(bundle.href);
process.exitCode = await main(process.argv.slice(2));
