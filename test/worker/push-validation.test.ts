// Issue 9 defects 1-3 through the real Node server: poison depth refused, nothing stored before validation ends, odd host ids served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../shared/keys.js';
import { LIMITS } from '../../shared/wire.js';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { startNodeRig, storedKeys, type NodeRig } from './node-rig.js';
import { TEST_ADMIN_SECRET, TestClient, adminCreateAccount, appFetcher, entryLine, makeBatch, metaFor, storeSnapshot } from './routes-helpers.js';

let rig: NodeRig;

beforeAll(async () => {
  rig = await startNodeRig();
});
afterAll(() => rig?.close());

/** `{"a":{"a":...1}}` with `n` objects. */
function nested(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

const sessionKeys = (session: string) => storedKeys(rig.fs, `a/${rig.account}/s/${session}/`);

describe('defect 1: a poison entry is refused, with the limit named', () => {
  it('an entry line nested 3,000 levels (6 KB) is 400 naming the limit, and the session stays empty', async () => {
    const line = JSON.stringify(entryLine('h', 1, 0, { data: nested(3000) }));
    expect(line.length).toBeLessThan(20_000);
    const r = await rig.alice.push(await makeBatch({ session: 'poison', host: 'h', seq: 1, lines: [line], meta: metaFor('poison') }));
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'bad_input', retryable: false });
    expect(r.json.error.message).toMatch(new RegExp(`deeper than ${LIMITS.maxJsonDepth} levels`));
    expect(await sessionKeys('poison')).toEqual([]);
    expect((await rig.alice.pull('poison')).status).toBe(404);
  });

  it('at the limit is fine: an entry and a header that nest exactly 64 levels are stored and served', async () => {
    // The entry object is level 1 and its `x` holds 63 more.
    const entry = entryLine('h', 1, 0, { x: nested(LIMITS.maxJsonDepth - 1) });
    const meta = metaFor('edge');
    meta.header = { ...meta.header, x: nested(LIMITS.maxJsonDepth - 1) };
    const r = await rig.alice.push(await makeBatch({ session: 'edge', host: 'h', seq: 1, lines: [entry], meta }));
    expect(r.status, r.text).toBe(201);
    const pulled = await rig.alice.pullAll('edge');
    expect(pulled.batches).toHaveLength(1);
    expect((await rig.alice.call('GET', '/v1/sessions/edge')).json.header.x).toEqual(nested(LIMITS.maxJsonDepth - 1));
  });
});

describe('defect 2: everything is validated before anything is stored', () => {
  it('a meta.header nested 3,000 levels is 400 (not 500, not retryable) and leaves no orphan batch, head or meta', async () => {
    const meta = metaFor('orphan');
    meta.header = { ...meta.header, deep: nested(3000) };
    const r = await rig.alice.push(await makeBatch({ session: 'orphan', host: 'h', seq: 1, meta }));
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.retryable).toBe(false);
    expect(r.json.error.message).toMatch(/meta\.header/);
    expect(r.json.error.message).toMatch(new RegExp(`at most ${LIMITS.maxJsonDepth} levels`));
    expect(await sessionKeys('orphan')).toEqual([]);
    expect(await storedKeys(rig.fs, keys.sessionHeadsPrefix(rig.account, 'orphan'))).toEqual([]);
  });

  it.each([
    ['a header over 2 KiB', 413, { note: 'n'.repeat(LIMITS.maxHeaderBytes) }, /more than the limit of 2048/],
    ['a header that is not a session header', 400, { type: 'note' }, /not a session header/],
    ['a header without a cwd', 400, { cwd: null }, /without a "cwd" string/],
  ] as const)('%s is %i and stores nothing', async (_name, status, extra, message) => {
    const session = `bad-meta-${status}-${Object.keys(extra)[0]}`;
    const meta = metaFor(session);
    meta.header = { ...meta.header, ...extra };
    const r = await rig.alice.push(await makeBatch({ session, host: 'h', seq: 1, meta }));
    expect(r.status, r.text).toBe(status);
    expect(r.json.error.message).toMatch(message);
    expect(await sessionKeys(session)).toEqual([]);
  });

  it('a plaintext meta whose header.id is another session is 400 naming both ids, and stores nothing', async () => {
    const r = await rig.alice.push(await makeBatch({ session: 'meta-mine', host: 'h', seq: 1, meta: metaFor('meta-other') }));
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'bad_input', retryable: false });
    expect(r.json.error.message).toContain('"meta-other"');
    expect(r.json.error.message).toContain('"meta-mine"');
    expect(await sessionKeys('meta-mine')).toEqual([]);
    expect(await sessionKeys('meta-other')).toEqual([]);
  });

  it('in POST /v1/batches the mismatched item is refused alone: the other session is stored', async () => {
    const bad = await makeBatch({ session: 'meta-multi-bad', host: 'h', seq: 1, meta: metaFor('meta-multi-x') });
    const good = await makeBatch({ session: 'meta-multi-ok', host: 'h', seq: 1, meta: metaFor('meta-multi-ok') });
    const r = await rig.alice.call('POST', '/v1/batches', { batches: [bad, good] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results[0]).toMatchObject({ ok: false, error: { code: 'bad_input' } });
    expect(r.json.results[0].error.message).toMatch(/meta\.header\.id "meta-multi-x" .*"meta-multi-bad"/);
    expect(r.json.results[1]).toMatchObject({ ok: true, status: 'created' });
    expect(await sessionKeys('meta-multi-bad')).toEqual([]);
    expect((await rig.alice.call('GET', '/v1/sessions/meta-multi-ok')).json.header.id).toBe('meta-multi-ok');
  });

  it('a bad line after good ones stores none of the batch', async () => {
    const good = entryLine('h', 1, 0);
    const r = await rig.alice.push(await makeBatch({ session: 'half', host: 'h', seq: 1, lines: [good, good, '{"type":"message"'], meta: metaFor('half') }));
    expect(r.status).toBe(400);
    expect(await sessionKeys('half')).toEqual([]);
  });
});

describe('defect 3: host ids that are Object.prototype names are stored and served', () => {
  const HOSTS = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'toLocaleString', 'propertyIsEnumerable'];

  beforeAll(async () => {
    for (const host of HOSTS) {
      for (const seq of [1, 2]) {
        const r = await rig.alice.push(await makeBatch({ session: 'proto', host, seq, ...(seq === 1 ? { meta: metaFor('proto') } : {}) }));
        expect(r.status, r.text).toBe(201);
      }
    }
  });

  it('pull with an empty cursor serves every batch of every such host', async () => {
    const { batches, cursor } = await rig.alice.pullAll('proto');
    expect(batches.map((b) => `${b.envelope.host}/${b.envelope.seq}`).sort()).toEqual(HOSTS.flatMap((h) => [`${h}/1`, `${h}/2`]).sort());
    expect(cursor).toEqual(Object.fromEntries(HOSTS.map((h) => [h, 2])));
  });

  it('pull with a cursor that names them continues after it, per host', async () => {
    const r = await rig.alice.pull('proto', { constructor: 1, toString: 2 });
    expect(r.status).toBe(200);
    const got = r.json.batches.map((b: any) => `${b.envelope.host}/${b.envelope.seq}`);
    expect(got).toContain('constructor/2');
    expect(got).not.toContain('constructor/1');
    expect(got.filter((x: string) => x.startsWith('toString/'))).toEqual([]);
    expect(got).toContain('valueOf/1');
    expect(r.json.cursor).toMatchObject({ constructor: 2, toString: 2, valueOf: 2 });
    expect(r.json.more).toBe(false);
  });

  it('the session meta and /v1/changes list them with their heads', async () => {
    expect((await rig.alice.call('GET', '/v1/sessions/proto')).json.hosts).toEqual(Object.fromEntries(HOSTS.map((h) => [h, 2])));
    const heads = (await rig.alice.call('GET', '/v1/changes')).json.heads.filter((h: any) => h.session === 'proto');
    expect(heads.map((h: any) => `${h.host}:${h.seq}`).sort()).toEqual(HOSTS.map((h) => `${h}:2`).sort());
  });
});

describe('same class: the hosts of one session are bounded', () => {
  it(`host ${LIMITS.maxHostsPerSession + 1} of a session is 413 and stores nothing; the existing hosts push on`, async () => {
    // In memory: a thousand pushes over HTTP and the file system would only make this slow.
    const store = new MemoryStore();
    const f = appFetcher(createApp({ store, adminSecret: TEST_ADMIN_SECRET }));
    const me = new TestClient(f, (await adminCreateAccount(f, TEST_ADMIN_SECRET)).token);
    for (let i = 0; i < LIMITS.maxHostsPerSession; i++) {
      expect((await me.push(await makeBatch({ session: 'crowd', host: `h${i}`, seq: 1, count: 1 }))).status).toBe(201);
    }
    const before = await storeSnapshot(store);
    const r = await me.push(await makeBatch({ session: 'crowd', host: 'one-too-many', seq: 1, count: 1 }));
    expect(r.status).toBe(413);
    expect(r.json.error.message).toMatch(/already has batches from 1000 hosts, the limit/);
    expect(await storeSnapshot(store)).toEqual(before);
    expect((await me.push(await makeBatch({ session: 'crowd', host: 'h7', seq: 2, count: 1 }))).status).toBe(201);
  });
});
