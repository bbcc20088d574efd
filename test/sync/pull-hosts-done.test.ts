// A host the pull's cursor did not name yet, read to its end on a page that ends the session's batches, counts as
// done: the pull does not ask for it once more after the host it waited for is read.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/wire.js';
import { piView, plain, sessyncView } from '../pi/pi-view.js';
import { Machine, childrenBeforeParents, machineWithHost, readLog, useServer } from './helpers.js';
import { forwardTo } from './forwarding-proxy.js';

const env = { SESSYNC_SYNC_BATCH_BYTES: '1' }; // one entry a batch

describe('a pull with no hosts named beforehand (resume of a session only the server has)', () => {
  const rig = useServer(undefined, 'sessync-hosts-done-');

  it('asks once per round it needs: a host first served on the last page is not asked again', async () => {
    const REMOTE = 'git@github.com:acme/hosts-done.git';
    const a = machineWithHost(rig.root, 'a', 'host-a', { remote: REMOTE, env });
    const b = machineWithHost(rig.root, 'b', 'host-b', { remote: REMOTE, env });
    const c = machineWithHost(rig.root, 'c', 'host-c', { remote: REMOTE, env });
    for (const m of [a, b, c]) await m.login(rig.server);
    // b writes the root; a hangs more than a page of entries from it; c continues from a's last.
    const id = await b.newSession();
    await b.say(id, 'root from b');
    await b.ok(['push', '--json']);
    await a.ok(['pull', '--json']);
    await a.say(id, ...Array.from({ length: LIMITS.maxBatchesPerPull + 5 }, (_, i) => `a ${i}`));
    await a.ok(['push', '--json']);
    await c.ok(['pull', '--json']);
    await c.say(id, 'c after a');
    await c.ok(['push', '--json']);
    const want = readLog(c.fileOf(id)).ids.sort();

    const forwarded: string[] = [];
    const proxy = createServer(forwardTo(rig.server.url, forwarded, () => false));
    await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', () => ok()));
    try {
      const d = new Machine(rig.root, 'd', { remote: REMOTE });
      await d.login({ ...rig.server, url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
      forwarded.length = 0;
      await d.ok(['resume', id, '--json']);
      // 1: host-a's first page, waiting for b's root. 2: a skipped; b's root and c's entry, the server's last for the
      // hosts asked (c's waits for a's last). 3: c skipped; the rest of a, after which nothing waits and no host is unread.
      expect(forwarded.filter((r) => r === `POST /v1/sessions/${id}/pull`), 'pull requests').toHaveLength(3);
      const file = d.fileOf(id);
      expect(readLog(file).ids.sort(), 'every entry, once').toEqual(want);
      expect(childrenBeforeParents(file), 'parents first').toEqual([]);
      expect(plain(await sessyncView(file))).toEqual(plain(piView(file)));
    } finally {
      proxy.close();
    }
  }, 120_000);
});
