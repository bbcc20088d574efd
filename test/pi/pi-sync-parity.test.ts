// Two machines through a real server (`sessync serve`): after sync, pi's rule (the last line) and sessync's rule
// (the newest tip) give the same leaf on both machines, with the same branch, model, thinking level and messages,
// and a second sync is quiet. The cases where they used to part: a newer local tip, equal timestamps, pi with a
// clock 10 minutes behind.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SessionManager } from '@mariozechner/pi-coding-agent';
import { jsonl, msg } from '../cli/cli-env.js';
import { Machine, readLog, useServer } from '../sync/helpers.js';
import { piView, plain, sessyncView, type View } from './pi-view.js';

const REMOTE = 'git@github.com:acme/pi-parity.git';

/** pi and sessync agree on every machine, and the machines agree with each other. */
async function expectAgreement(machines: Machine[], id: string): Promise<View> {
  const views: View[] = [];
  for (const m of machines) {
    const file = m.fileOf(id);
    const pi = plain(piView(file));
    expect(plain(await sessyncView(file)), `sessync vs pi on ${m.home}`).toEqual(pi);
    expect(readLog(file).ids.at(-1)).toBe(pi.leafId);
    views.push(pi);
  }
  for (const v of views.slice(1)) expect(v).toEqual(views[0]);
  return views[0]!;
}

/** After every sync of a machine, pi and sessync agree there (each machine on its own, before the others catch up). */
async function syncAgreeing(m: Machine, id: string): Promise<void> {
  await m.ok(['sync', '--json']);
  const file = m.fileOf(id);
  expect(plain(await sessyncView(file)), `sessync vs pi on ${m.home}`).toEqual(plain(piView(file)));
}

async function quiet(machines: Machine[]): Promise<void> {
  for (const m of machines) expect(await m.ok(['sync', '--json'])).toMatchObject({ pushedEntries: 0, pulledEntries: 0, failed: 0 });
}

const append = (m: Machine, id: string, entries: object[]) => m.ok(['append', id, '--json'], jsonl(entries));
const texts = (v: View) => JSON.stringify(v.messages);

describe('pi and sessync resume the same branch after a sync (two machines, real server)', () => {
  const rig = useServer(undefined, 'sessync-pi-sync-');
  let n = 0;
  async function pair(): Promise<{ a: Machine; b: Machine; id: string; ids: string[] }> {
    n++;
    const a = new Machine(rig.root, `a${n}`, { remote: REMOTE });
    const b = new Machine(rig.root, `b${n}`, { remote: 'https://github.com/acme/pi-parity' });
    await a.login(rig.server);
    await b.login(rig.server);
    const id = await a.newSession();
    const { ids } = await append(a, id, [msg('user', 'start'), msg('assistant', 'ready', { provider: 'openai', model: 'gpt-5' })]);
    await a.ok(['sync', '--json']);
    await b.ok(['sync', '--json']);
    return { a, b, id, ids };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it('1. the machine whose own tip is newest pulls the other branch last: a marker keeps its leaf for pi', async () => {
    const { a, b, id, ids } = await pair();
    await append(a, id, [msg('user', 'A: continue at the leaf')]);
    await b.ok(['checkout', id, ids[0]!, '--json']);
    await append(b, id, [msg('user', 'B: another way'), msg('assistant', 'B: done', { provider: 'anthropic', model: 'claude-sonnet-4-5' })]);
    await syncAgreeing(a, id);
    await syncAgreeing(b, id);
    await syncAgreeing(a, id);
    const v = await expectAgreement([a, b], id);
    expect(texts(v)).toContain('B: done');
    expect(texts(v)).not.toContain('A: continue');
    expect(v.model).toEqual({ provider: 'anthropic', modelId: 'claude-sonnet-4-5' });
    await quiet([b, a]);
  }, 120_000);

  for (const [name, idA, idB] of [
    ['A', 'fffffff1', '00000001'],
    ['B', '00000002', 'fffffff2'],
  ] as const) {
    it(`2. two tips in the same millisecond (the greater id is ${name}'s): both machines and pi end on it`, async () => {
      const { a, b, id, ids } = await pair();
      const ts = new Date(Date.now() + 1000).toISOString();
      await append(a, id, [{ ...msg('user', `tie from A`), id: idA, parentId: ids[1], timestamp: ts }]);
      await append(b, id, [{ ...msg('user', `tie from B`), id: idB, parentId: ids[1], timestamp: ts }]);
      await syncAgreeing(a, id);
      await syncAgreeing(b, id);
      await syncAgreeing(a, id);
      // When A's tip wins, A's last sync pulled B's tip behind it and added the marker: B takes it down.
      await syncAgreeing(b, id);
      const v = await expectAgreement([a, b], id);
      expect(v.branch).toContain(name === 'A' ? idA : idB);
      await quiet([b, a]);
    }, 120_000);
  }

  it('3. pi on B, 10 minutes behind, branches: after sync both machines and pi continue on pi\'s branch', async () => {
    const { a, b, id, ids } = await pair();
    await append(a, id, [msg('user', 'A: newer by the clock')]);
    // pi itself writes on B, with its clock 10 minutes behind: older timestamps than every entry it continues.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 10 * 60_000);
    const sm = SessionManager.open(b.fileOf(id));
    sm.branch(ids[0]!);
    sm.appendThinkingLevelChange('high');
    sm.appendMessage({ role: 'user', content: 'pi on B: try this instead', timestamp: Date.now() });
    vi.useRealTimers();
    expect(piView(b.fileOf(id)).leafId).toBe(sm.getLeafId());
    await syncAgreeing(a, id);
    await syncAgreeing(b, id);
    await syncAgreeing(a, id);
    const v = await expectAgreement([a, b], id);
    expect(texts(v)).toContain('pi on B: try this instead');
    expect(texts(v)).not.toContain('A: newer by the clock');
    expect(v.thinkingLevel).toBe('high');
    expect(v.branch).toContain(sm.getLeafId());
    await quiet([b, a]);
  }, 120_000);
});
