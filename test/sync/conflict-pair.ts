// Two machines whose copies of one session hold the same entry id with different content, a pushing b pulling.
import type { Machine, TestServer } from './helpers.js';
import { pairWithSession } from './helpers.js';

/** The message entry `id` appended on `m` with `content` (an id given: the clash is made on purpose). */
export function appendWithId(m: Machine, session: string, id: string, content: string): Promise<unknown> {
  return m.ok(['append', session, '--json'], JSON.stringify({ type: 'message', id, message: { role: 'user', content } }) + '\n');
}

/**
 * a and b synced with one session, then `clash-0001` appended on each with other content ('version A', 'version B')
 * and a synced: b's next pull meets the clash.
 */
export async function clashingPair(root: string, names: [string, string], remote: string, server: TestServer): Promise<{ a: Machine; b: Machine; id: string; clash: string }> {
  const { a, b, id } = await pairWithSession(root, names, [remote, remote], server, 'shared start');
  await a.ok(['sync', '--json']);
  await b.ok(['sync', '--json']);
  const clash = 'clash-0001';
  await appendWithId(a, id, clash, 'version A');
  await appendWithId(b, id, clash, 'version B');
  await a.ok(['sync', '--json']);
  return { a, b, id, clash };
}
