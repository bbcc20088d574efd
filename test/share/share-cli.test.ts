// `sessync share/shares/unshare/import` as real processes against a real local server: branches, round trip, redaction, revocation.
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { branchySession, openLink, startHarness, storedFiles, type Harness } from './share-harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

async function share(args: string[]): Promise<{ url: string; id: string; expiresAt: string; entryCount: number; redacted: Record<string, number> | null }> {
  const r = await h.cli(['share', ...args, '--json']);
  if (r.code !== 0) throw new Error(`share failed (${r.code}): ${r.stderr}`);
  return r.json();
}

function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

describe('share a session with concurrent branches', () => {
  it('shares exactly the active branch by default, and exactly root..ENTRY with --at', async () => {
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000000b1');
    h.writeSession(s.header, s.entries);
    const leaf = await share([s.header.id, '--no-redact']);
    expect(leaf.url).toMatch(new RegExp(`^${h.server.url}/s/[A-Za-z0-9_-]{43}#[A-Za-z0-9_-]{43}$`));
    expect(leaf.entryCount).toBe(5);
    const p1 = await openLink(leaf.url);
    expect(p1.entries.map((e) => e.id)).toEqual(['e0-model', 'e1-a', 'e2-b', 'e5-x', 'e6-y']);
    expect(p1.source).toEqual({ session: s.header.id, entryId: 'e6-y', entryCount: 5 });

    const other = await share([s.header.id, '--at', 'e4-d', '--no-redact']);
    const p2 = await openLink(other.url);
    expect(p2.entries.map((e) => e.id)).toEqual(['e0-model', 'e1-a', 'e2-b', 'e3-c', 'e4-d']);
    // The entries are the source's, unchanged.
    expect(p2.entries).toEqual(s.entries.filter((e) => p2.entries.some((x) => x.id === e.id)));
  });
});

describe('import round trip', () => {
  it('imports root..ENTRY with identical entries and ids, nothing after it, and a header naming the share', async () => {
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000000b2');
    h.writeSession(s.header, s.entries);
    const made = await share([s.header.id, '--at', 'e3-c', '--no-redact']);
    // The teammate: another project folder, no login at all.
    const mate = join(h.home, '..', 'mate');
    const mateProject = join(mate, 'work', 'app');
    mkdirSync(mateProject, { recursive: true });
    const env = { HOME: mate, SESSYNC_HOME: join(mate, '.sessync'), SESSYNC_SESSIONS_DIR: join(mate, '.sessync', 'sessions') };
    mkdirSync(env.SESSYNC_SESSIONS_DIR, { recursive: true }); // a named sessions folder must exist
    const r = await h.cli(['import', made.url, '--json'], { cwd: mateProject, env });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out.entryCount).toBe(4);
    const [header, ...entries] = lines(out.path);
    expect(entries).toEqual(s.entries.slice(0, 4));
    expect(entries.map((e) => e.id)).not.toContain('e4-d');
    expect(header).toMatchObject({
      type: 'session',
      version: 3,
      id: out.id,
      cwd: realpathSync(mateProject),
      parentSession: `sessync-share:${made.id}`,
      sharedFrom: { share: made.id, session: s.header.id, entryId: 'e3-c' },
    });
    expect(out.id).not.toBe(s.header.id);
    // The imported session is a normal local session: it resolves and continues.
    const ctx = await h.cli(['log', out.id.slice(0, 13), '--json'], { cwd: mateProject, env });
    expect(ctx.code, ctx.stderr).toBe(0);
    expect(ctx.stdout).toContain('e3-c');
  });

  it('refuses a link without its key, and a wrong key, with clear messages', async () => {
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000000b3');
    h.writeSession(s.header, s.entries);
    const made = await share([s.header.id, '--no-redact']);
    const noKey = await h.cli(['import', made.url.split('#')[0]!]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/no key/);
    const wrong = await h.cli(['import', made.url.replace(/#.*/, '#' + 'A'.repeat(43))]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/cannot be decrypted/);
  });
});

// Built from parts so secret scanners do not flag this file; all fake.
const SECRETS = {
  aws: 'AKIA' + 'IOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY' + 'EXAMPLEKEY',
  github: 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
  pemBody: 'MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn' + 'ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB',
  dotenv: 'pg-' + 'p4ss-w0rd-from-dotenv',
  envVar: 'env-' + 'token-value-9f8e7d6c',
};

describe('redaction before upload', () => {
  it('a fake AWS key, a GitHub token, a private key, a .env value and a secret env var never reach the server', async () => {
    writeFileSync(join(h.project, '.env'), `DATABASE_PASSWORD=${SECRETS.dotenv}\nPORT=3000\n`);
    const header = { type: 'session', version: 3, id: '019a0000-0000-7000-8000-0000000000c1', timestamp: '2026-01-03T00:00:00.000Z', cwd: h.project };
    const pem = `-----BEGIN RSA PRIVATE KEY-----\n${SECRETS.pemBody}\n-----END RSA PRIVATE KEY-----`;
    const entries = [
      { type: 'message', id: 'r1', parentId: null, timestamp: '2026-01-03T00:00:01.000Z', message: { role: 'user', content: `my key is ${SECRETS.aws} and aws_secret_access_key=${SECRETS.awsSecret}` } },
      {
        type: 'message', id: 'r2', parentId: 'r1', timestamp: '2026-01-03T00:00:02.000Z',
        message: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: `git clone https://${SECRETS.github}@github.com/x/y && cat ${h.home}/.ssh/id_rsa` } }] },
      },
      { type: 'message', id: 'r3', parentId: 'r2', timestamp: '2026-01-03T00:00:03.000Z', message: { role: 'toolResult', toolCallId: 'c1', toolName: 'bash', content: [{ type: 'text', text: `${pem}\nDB pass ${SECRETS.dotenv}, token ${SECRETS.envVar}` }], isError: false } },
    ];
    h.writeSession(header, entries);
    const r = await h.cli(['share', header.id, '--json'], { env: { DEPLOY_TOKEN: SECRETS.envVar } });
    expect(r.code, r.stderr).toBe(0);
    const made = r.json();
    expect(made.redacted).toMatchObject({ aws_access_key: 1, aws_secret_key: 1, github_token: 1, private_key: 1, env_file_value: 1, env_var_value: 1 });
    expect(made.redacted.home_path).toBeGreaterThanOrEqual(2);
    // The human output says what was redacted (stderr, as counts by kind).
    const human = await h.cli(['share', header.id], { env: { DEPLOY_TOKEN: SECRETS.envVar } });
    expect(human.stderr).toMatch(/redacted: .*1 aws_access_key.*1 github_token.*1 private_key/);

    // What the server stored: no secret, no key, no raw token, anywhere.
    const key = made.url.split('#')[1];
    const token = new URL(made.url).pathname.split('/').pop()!;
    const stored = storedFiles(h.dataDir);
    expect(stored.length).toBeGreaterThan(0);
    for (const f of stored) {
      for (const [name, secret] of Object.entries(SECRETS)) expect(f.text.includes(secret), `${name} in ${f.path}`).toBe(false);
      expect(f.text.includes(key), `share key in ${f.path}`).toBe(false);
      expect(f.text.includes(token), `raw share token in ${f.path}`).toBe(false);
    }
    // What a viewer decrypts: redacted too (the stored bytes are ciphertext, so this is the real check).
    const payload = JSON.stringify(await openLink(made.url));
    for (const [name, secret] of Object.entries(SECRETS)) expect(payload.includes(secret), name).toBe(false);
    expect(payload).not.toContain(h.home);
    expect(payload).toContain('[REDACTED:private_key]');
    expect(payload).toContain('~/.ssh/id_rsa');
    expect(payload).toContain('"cwd":"~/src/app"');
  });

  it('a session pulled from another machine: its header cwd\'s home and any /Users/<name> or /home/<name> become ~', async () => {
    const header = { type: 'session', version: 3, id: '019a0000-0000-7000-8000-0000000000c3', timestamp: '2026-01-03T00:00:00.000Z', cwd: '/Users/alice/code/app' };
    const entries = [
      { type: 'message', id: 'm1', parentId: null, timestamp: '2026-01-03T00:00:01.000Z', message: { role: 'user', content: 'open /Users/alice/code/app/src/main.ts and /home/bob/.aws/config' } },
    ];
    h.writeSession(header, entries);
    const made = await share([header.id]);
    expect(made.redacted).toMatchObject({ home_path: 3 });
    const payload = JSON.stringify(await openLink(made.url));
    expect(payload).not.toContain('alice');
    expect(payload).not.toContain('bob');
    expect(payload).toContain('"cwd":"~/code/app"');
    expect(payload).toContain('open ~/code/app/src/main.ts and ~/.aws/config');
  });

  it('blocks the share when the re-scan still finds a secret (here, in an object key), uploading nothing', async () => {
    const before = (await h.cli(['shares', '--json'])).json().shares.length;
    const header = { type: 'session', version: 3, id: '019a0000-0000-7000-8000-0000000000c2', timestamp: '2026-01-03T00:00:00.000Z', cwd: h.project };
    const entries = [{ type: 'custom', id: 'k1', parentId: null, timestamp: '2026-01-03T00:00:01.000Z', customType: 'x', data: { [SECRETS.github]: true } }];
    h.writeSession(header, entries);
    const r = await h.cli(['share', header.id]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/blocked.*1 github_token/);
    expect((await h.cli(['shares', '--json'])).json().shares.length).toBe(before);
  });
});

describe('shares and unshare', () => {
  it('lists shares, revokes by link and by id; revoked links answer 410 to import and the blob route', async () => {
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000000d1');
    h.writeSession(s.header, s.entries);
    const a = await share([s.header.id, '--no-redact', '--expires', '2h']);
    const b = await share([s.header.id, '--no-redact']);
    expect(Date.parse(a.expiresAt) - Date.now()).toBeGreaterThan(119 * 60_000);
    expect(Date.parse(a.expiresAt) - Date.now()).toBeLessThanOrEqual(120 * 60_000);
    const listed = (await h.cli(['shares', '--json'])).json().shares;
    expect(listed.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect(listed.find((x: { id: string }) => x.id === a.id)).toMatchObject({ status: 'active', session: s.header.id, entryCount: 5 });

    expect((await h.cli(['unshare', a.url])).code).toBe(0);
    const byId = await h.cli(['unshare', b.id, '--json']);
    expect(byId.json()).toEqual({ revoked: true, id: b.id });
    for (const link of [a.url, b.url]) {
      const imp = await h.cli(['import', link]);
      expect(imp.code).toBe(1);
      expect(imp.stderr).toMatch(/revoked/);
      const token = new URL(link).pathname.split('/').pop();
      expect((await fetch(`${h.server.url}/v1/shares/${token}/blob`)).status).toBe(410);
    }
    const after = (await h.cli(['shares', '--json'])).json().shares;
    // Revoked shares leave the list (their ciphertext is gone from the server).
    expect(after.map((x: { id: string }) => x.id)).not.toEqual(expect.arrayContaining([a.id]));
    expect(after.map((x: { id: string }) => x.id)).not.toEqual(expect.arrayContaining([b.id]));
  });

  it('share needs a login and a valid --expires; unshare of an unknown id is not found', async () => {
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000000d2');
    h.writeSession(s.header, s.entries);
    const bad = await h.cli(['share', s.header.id, '--expires', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not a duration/);
    const noLogin = await h.cli(['share', s.header.id], { env: { SESSYNC_HOME: join(h.home, 'nowhere') } });
    expect(noLogin.code).toBe(1);
    expect(noLogin.stderr).toMatch(/not logged in/);
    const unknown = await h.cli(['unshare', 'zzzzzzzzzzzzzzzz']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no share of yours/);
  });
});
