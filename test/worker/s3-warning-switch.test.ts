// The AWS SDK's NodeVersionSupportWarning switch: the SDK honours only the exact value "true", so a user's `=1`,
// `yes` or `TRUE` must still silence it (it breaks --json stderr), and the user's own value is left as it was.
// Real parts: a real S3Client built in a child process (the SDK keeps its first answer per process), and the real
// `sessync serve --json` with an S3 store.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';

const NAME = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
const CHILD = join(REPO_ROOT, 'test/worker/s3-warning-child.ts');

/** Node below 22 is what the SDK warns about: on a newer Node there is no warning to silence, so nothing to test. */
const warnsHere = Number(process.versions.node.split('.')[0]) < 22;

/** The environment of this process without any AWS setting of the developer's, with the switch as given. */
function envWith(value: string | undefined): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (/^(AWS_|SESSYNC_S3_)/.test(k)) delete env[k];
  return { ...env, AWS_EC2_METADATA_DISABLED: 'true', [NAME]: value };
}

function buildClient(value: string | undefined): { warnings: string[]; after: string | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD], { cwd: REPO_ROOT, encoding: 'utf8', env: envWith(value) as NodeJS.ProcessEnv });
  expect(r.status, r.stderr).toBe(0);
  return { ...(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { warnings: string[]; after: string | null }), stderr: r.stderr };
}

describe.runIf(warnsHere)("S3Store.newClient and the SDK's version warning switch", () => {
  it('the rig can see the warning: a user who asks for it (=false) gets it', () => {
    const r = buildClient('false');
    expect(r.warnings).toEqual([expect.stringMatching(/NodeVersionSupportWarning/)]);
    expect(r.after).toBe('false');
  });

  it.each(['1', 'yes', 'TRUE', 'true', ' on '])('a truthy value (%j) silences it, and stays as the user set it', (value) => {
    const r = buildClient(value);
    expect(r.warnings).toEqual([]);
    expect(r.stderr).not.toMatch(/NodeVersionSupportWarning/);
    expect(r.after).toBe(value);
  });

  it('unset, it is silenced and stays unset', () => {
    const r = buildClient(undefined);
    expect(r.warnings).toEqual([]);
    expect(r.after).toBeNull();
  });

  it('serve --json with an S3 store and the switch =1 keeps stderr to JSON lines', async () => {
    const t = tempDir('sessync-s3-switch-');
    try {
      const env = { ...envWith('1'), SESSYNC_HOME: join(t.dir, 'home'), AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: 's' };
      // Nothing listens on port 1: the start-up check fails to connect, after the client is made.
      const r = await runCli(['--json', 'serve', '--port', '0', '--store', 's3://bkt', '--endpoint', 'http://127.0.0.1:1'], { env, cwd: t.dir });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/NodeVersionSupportWarning/);
      const lines = r.stderr.trimEnd().split('\n');
      for (const l of lines) expect(() => JSON.parse(l), l).not.toThrow();
      expect(JSON.parse(lines.at(-1)!).error).toMatchObject({ code: 'unavailable' });
    } finally {
      t.cleanup();
    }
  });
});
