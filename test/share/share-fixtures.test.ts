// Sharing real pi v1 sessions (migrated in memory): the import equals the migrated branch, and the import can be pushed.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSession } from '../../cli/store/session-reader.js';
import { projectDir } from '../../cli/store/paths.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { openLink, startHarness, type Harness } from './share-harness.js';

const FIXTURES = join(REPO_ROOT, '..', 'shared', 'fixtures', 'pi-v1');
const present = existsSync(join(FIXTURES, 'before-compaction.jsonl'));
if (!present) console.warn(`SKIPPED test/share/share-fixtures.test.ts: fixtures not found at ${FIXTURES}`);

describe.skipIf(!present)('sharing the pi v1 fixtures', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const name of ['large-session.jsonl', 'before-compaction.jsonl']) {
    it(`${name}: the import holds exactly the migrated branch, and pushes`, async () => {
      // A copy in the temporary sessions folder: the fixture itself is never touched.
      const dir = projectDir(h.env.SESSYNC_SESSIONS_DIR!, h.project);
      mkdirSync(dir, { recursive: true });
      const copy = join(dir, `2025-01-01T00-00-00-000Z_${name}`);
      copyFileSync(join(FIXTURES, name), copy);
      const source = await readSession(copy);
      const id = source.header.id;
      const leaf = source.tree.leafId!;
      const at = source.tree.branch(leaf)[Math.floor(source.tree.branch(leaf).length / 2)]!.id;

      const made = await h.cli(['share', id, '--at', at, '--no-redact', '--json']);
      expect(made.code, made.stderr).toBe(0);
      const { url } = made.json();
      const payload = await openLink(url);
      expect(payload.entries).toEqual(source.tree.branch(at));

      const imp = await h.cli(['import', url, '--json']);
      expect(imp.code, imp.stderr).toBe(0);
      const { path, id: newId } = imp.json();
      const lines = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.slice(1)).toEqual(source.tree.branch(at));
      expect(lines.at(-1).id).toBe(at);
      // Its context has the model of the source: the v1 header fields are carried.
      expect(lines[0]).toMatchObject({ provider: source.header.provider, modelId: source.header.modelId });

      const push = await h.cli(['push', newId, '--json']);
      expect(push.code, push.stderr).toBe(0);
      // The server now holds the imported session under the pusher's account, header as imported.
      const meta = await fetch(`${h.server.url}/v1/sessions/${newId}`, { headers: { authorization: `Bearer ${h.server.token}` } });
      expect(meta.status).toBe(200);
      expect(((await meta.json()) as { header: Record<string, unknown> }).header.parentSession).toBe(lines[0].parentSession);
    });
  }
});
