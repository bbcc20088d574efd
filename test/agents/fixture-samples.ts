// Real session files from ../shared/fixtures as conformance samples; absent fixtures give no samples and a loud note.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SessionSample } from './agent.case.js';

export const FIXTURES = join(process.cwd(), '..', 'shared', 'fixtures');

/** The .jsonl files of one fixture folder, or [] (with a warning) when it is not there. */
export function fixtureFiles(dir: string): string[] {
  const at = join(FIXTURES, dir);
  if (!existsSync(at)) {
    console.warn(`fixtures not found at ${at}: the ${dir} conformance samples are skipped`);
    return [];
  }
  return readdirSync(at).filter((f) => f.endsWith('.jsonl')).sort().map((f) => join(at, f));
}

export function read(path: string): string {
  return readFileSync(path, 'utf8');
}

export type { SessionSample };
