// `sessync rm --remote` of a session whose share records on the server are damaged (real CLI, `sessync serve`): the deletion finishes and warns of the share it could not revoke.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keys } from '../../shared/keys.js';
import { BLOBS_DIR } from '../../worker/local-server.js';
import { FsStore } from '../../worker/store/fs-store.js';
import { Machine, useServer } from '../sync/helpers.js';
import { storedKeys } from '../worker/routes-helpers.js';

describe('rm --remote over damaged share records', () => {
  const rig = useServer(undefined, 'sessync-rm-damaged-');

  /** A synced session with two shares whose pointers are damaged; the second's index entry is damaged too. */
  async function damagedSession(laptop: Machine): Promise<{ id: string; found: { id: string; url: string }; lost: { id: string; url: string }; left: () => Promise<string[]> }> {
    const id = await laptop.newSession();
    await laptop.say(id, 'a line to share');
    await laptop.ok(['sync', '--json']);
    const found = await laptop.ok(['share', id, '--no-redact', '--json']);
    const lost = await laptop.ok(['share', id, '--no-redact', '--json']);
    const who = (await (await fetch(`${rig.server.url}/v1/whoami`, { headers: { authorization: `Bearer ${rig.server.token}` } })).json()) as { account: string };
    const store = new FsStore(join(rig.server.dataDir!, BLOBS_DIR));
    const cut = new TextEncoder().encode('{"id":"');
    await store.put(keys.sessionShare(who.account, id, found.id), cut);
    await store.put(keys.sessionShare(who.account, id, lost.id), cut);
    await store.put(keys.accountShare(who.account, lost.id), cut);
    return { id, found, lost, left: () => storedKeys(store, keys.sessionPrefix(who.account, id)) };
  }

  const status = async (url: string) => (await fetch(`${rig.server.url}/v1/shares/${new URL(url).pathname.split('/').pop()}/blob`)).status;

  it('revokes the share it can still find, warns of the one it cannot, and deletes the session whole; the warning\'s advice works', async () => {
    const laptop = new Machine(rig.root, 'laptop', { remote: 'git@github.com:acme/rm-damaged.git' });
    await laptop.login(rig.server);
    const { id, found, lost, left } = await damagedSession(laptop);
    const r = await laptop.run(['rm', id, '--remote']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`deleted session ${id} from the server \\(\\d+ objects, 1 share revoked\\)`));
    expect(r.stderr).toMatch(new RegExp(`warning: share ${lost.id} of session ${id} could not be revoked: .*may still open. Revoke it by the link \\(\`sessync unshare <link>\`\\)`));
    expect(await left()).toEqual([]);
    expect(await status(found.url)).toBe(410);
    // Run again (as after an answer that was lost): done already, and the warning is still given.
    const again1 = await laptop.run(['rm', id, '--remote']);
    expect(again1.code, again1.stderr).toBe(0);
    expect(again1.stderr).toMatch(new RegExp(`warning: share ${lost.id} of session ${id} could not be revoked`));
    expect(again1.stderr.match(/warning: share/g)).toHaveLength(1);
    // What the warning says, followed: the list names it as damaged, and its link revokes it.
    const listed = await laptop.ok(['shares', '--json']);
    expect(listed.damaged).toEqual([expect.objectContaining({ id: lost.id, revocableById: false })]);
    expect(await status(lost.url)).toBe(200);
    expect(await laptop.ok(['unshare', lost.url, '--json'])).toMatchObject({ revoked: true, id: lost.id });
    expect(await status(lost.url)).toBe(410);
    expect((await laptop.ok(['shares', '--json'])).damaged).toEqual([]);
    // Revoked by its link: no later run warns of it.
    const after = await laptop.run(['rm', id, '--remote']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).not.toMatch(/could not be revoked/);

    // With --json the same is in the answer.
    const again = await damagedSession(laptop);
    const j = await laptop.ok(['rm', again.id, '--remote', '--json']);
    expect(j).toMatchObject({ session: again.id, remote: true, sharesRevoked: 1, sharesNotRevoked: [{ id: again.lost.id, message: expect.stringMatching(/could not be revoked/) }] });
  }, 120_000);
});
