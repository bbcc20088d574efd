// Nothing readable at rest: after two machines sync encrypted sessions (concurrent branches, a name, a model), no
// stored object of the server, on the file store or on S3 (radosgw), holds their text, cwd, remote URL, model or name.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { radosgwInstalled } from '../helpers/radosgw.js';
import { entrySet, startNodeServer, useServer, type TestServer } from '../sync/helpers.js';
import { encryptedPair, fsObjects, readable, startS3Server, type S3Server } from './crypto-rig.js';

const s3 = radosgwInstalled() || process.env.CI === 'true';
if (!s3) console.warn('\n*** SKIPPED the S3 half of test/crypto/at-rest.test.ts: radosgw is not installed (apt-get install -y ceph-mon ceph-osd radosgw). ***\n');

type Started = TestServer & { cleanup(): void };
const backends: [string, () => Promise<Started>, boolean][] = [
  ['the file store', startNodeServer, true],
  ['S3 on radosgw', startS3Server, s3],
];

async function objectsOf(server: TestServer): Promise<{ key: string; text: string }[]> {
  return 'objects' in server ? (server as S3Server).objects() : fsObjects(server.dataDir!);
}

describe.each(backends)('at rest on %s', (_name, start, enabled) => {
  if (!enabled) {
    it.skip('needs radosgw', () => {});
    return;
  }
  const rig = useServer(start, 'sessync-rest-');

  it('two machines sync both ways; every stored object is opaque', async () => {
    const { a, b } = await encryptedPair(rig.root, rig.server);
    const id = ((await a.ok(['new', '--model', 'anthropic/claude-nightingale-7', '--json'])) as { id: string }).id;
    await a.say(id, 'the launch password is swordfish-4471', 'plan the merger with Initech');
    await a.ok(['name', id, 'Project Nightingale', '--json']);
    await a.ok(['sync', '--json']);
    expect(await b.ok(['sync', '--json'])).toMatchObject({ createdSessions: 1, failed: 0 });
    await a.say(id, 'laptop branch: rotate the swordfish-4471 password');
    await b.say(id, 'desktop branch: call Initech legal');
    for (const m of [b, a, b, a]) expect(await m.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    const fa = a.fileOf(id);
    const fb = b.fileOf(id);
    expect([...entrySet(fa).entries()].sort()).toEqual([...entrySet(fb).entries()].sort());

    const secrets = ['swordfish-4471', 'Initech', 'laptop branch', 'desktop branch', 'Project Nightingale', 'claude-nightingale-7', 'Secret-App', 'secret-app', a.project, b.project];
    // The control: the secrets are in the machines' own files (so the scan below can find them).
    expect(readable([{ key: fa, text: readFileSync(fa, 'latin1') }], secrets).length).toBeGreaterThan(5);
    const objects = await objectsOf(rig.server);
    expect(objects.some((o) => o.key.includes(id)), objects.map((o) => o.key).slice(0, 20).join('\n')).toBe(true);
    expect(readable(objects, secrets)).toEqual([]);
  }, 240_000);
});
