// A Codex share imported where CODEX_HOME does not exist yet, under a folder this user may write in but not list
// (mode 0733): the import lands; the fsync of that folder, which this user can never open, is passed over as
// session-writer does. Run as uid 65534 through setpriv (root) in a real node process; skipped otherwise.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionEntry } from '../../shared/entry.js';
import { buildSharePayload } from '../../shared/share-payload.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { NOBODY, asRoot, asTestUser, hasSetpriv, nobodyReadsCli } from '../helpers/test-user.js';

const runnable = asRoot && process.platform === 'linux' && hasSetpriv() && nobodyReadsCli();
if (!runnable) console.warn(`import-unreadable-parent: skipped (needs root on Linux with setpriv, and this checkout readable by uid ${NOBODY})`);

const OLD = '019b04ae-b1c6-7c72-a134-a4c2de66058c';
const META = `{"timestamp":"2025-12-09T19:55:16.336Z","type":"session_meta","payload":{"id":"${OLD}","timestamp":"2025-12-09T19:55:16.295Z","cwd":"/there","originator":"codex_cli_rs","cli_version":"0.66.0","source":"cli"}}`;
const USER = '{"timestamp":"2025-12-09T19:55:18.144Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}';
const share = buildSharePayload(
  { type: 'session', version: 3, id: OLD, timestamp: '2025-12-09T19:55:16.295Z', cwd: '/there', agent: 'codex' },
  [META, USER].map((line, i): SessionEntry => ({ type: 'agent_line', agent: 'codex', id: `x-${i}`, parentId: i > 0 ? `x-${i - 1}` : null, timestamp: '', file: '', value: JSON.parse(line), line })),
);

describe.skipIf(!runnable)('a Codex import under a folder the user cannot list (uid 65534, a real node process)', () => {
  const base = mkdtempSync(join(tmpdir(), 'sessync-unlistable-'));
  chmodSync(base, 0o755);
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('CODEX_HOME made in a 0733 folder: the rollout lands whole, no error', () => {
    const top = join(base, 'top');
    mkdirSync(top);
    chmodSync(top, 0o733); // root's: others may make names in it, not list it (nor open it to fsync)
    const codexHome = join(top, 'codex');
    const payload = join(base, 'share.json');
    writeFileSync(payload, JSON.stringify(share));
    chmodSync(payload, 0o644);
    const script = join(base, 'import.mjs');
    const source = (p: string) => JSON.stringify(pathToFileURL(join(REPO_ROOT, p)).href);
    writeFileSync(
      script,
      [
        `import { readFileSync } from 'node:fs';`,
        `const { writeCodexImport } = await import(${source('cli/agents/codex-import.ts')});`,
        `const r = await writeCodexImport(JSON.parse(readFileSync(process.argv[2], 'utf8')), { CODEX_HOME: process.argv[3] }, '/home/me/proj');`,
        `console.log(JSON.stringify(r));`,
      ].join('\n'),
    );
    chmodSync(script, 0o644);
    const cmd = asTestUser([process.execPath, '--import', 'tsx', script, payload, codexHome]);
    let out: string;
    try {
      out = execFileSync(cmd[0]!, cmd.slice(1), { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      throw new Error(`the import failed: ${(e as { stderr?: string }).stderr ?? String(e)}`);
    }
    const r = JSON.parse(out.trim().split('\n').pop()!) as { path: string };
    expect(r.path.startsWith(join(codexHome, 'sessions'))).toBe(true);
    const lines = readFileSync(r.path, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(0, -1).map((l) => JSON.parse(l) as { type: string }).map((l) => l.type)).toEqual(['session_meta', 'response_item']);
    expect(readdirSync(join(r.path, '..')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
