// One session id created on two machines of an encrypted account at once (a copied session file pushed from both
// before either pulled): both derive the same data key, so the session ends with one key and nobody's entries are lost.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../cli/api-client.js';
import { deriveKeys, deriveSessionKey, importAccountKey } from '../../shared/sync-crypto.js';
import { entrySet, startNodeServer, useServer } from '../sync/helpers.js';
import { copySession, encryptedPair } from './crypto-rig.js';

interface Gate {
  url: string;
  /** Holds the next batch push until release(); resolves once it has arrived (its sender has sealed it by then). */
  holdNextPush(): Promise<void>;
  release(): void;
  close(): void;
}

/** A forwarding proxy in front of the real server that can hold one push back: it orders a real race. */
async function holdingGate(target: string): Promise<Gate> {
  let arm: (() => void) | null = null;
  let open: Promise<void> = Promise.resolve();
  let release = () => {};
  const srv = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (arm && req.method === 'POST' && /\/batches$/.test(req.url ?? '')) {
      const arrived = arm;
      arm = null;
      arrived();
      await open;
    }
    try {
      const r = await fetch(target + req.url, {
        method: req.method!,
        headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection' && k !== 'content-length')) as Record<string, string>,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      });
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await r.arrayBuffer()));
    } catch (e) {
      console.error(`gate: ${req.method} ${req.url} failed: ${String(e)}`);
      res.writeHead(502).end();
    }
  });
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', () => ok()));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    holdNextPush: () => {
      open = new Promise<void>((ok) => (release = ok));
      return new Promise<void>((ok) => (arm = ok));
    },
    release: () => release(),
    close: () => srv.close(),
  };
}

describe('the same encrypted session created on two machines', () => {
  const rig = useServer(startNodeServer, 'sessync-e2e-same-');
  let pair: ReturnType<typeof encryptedPair> | undefined;
  let gate: Gate | undefined;
  afterAll(() => gate?.close());

  it.each([
    ['in a forced order (b sealed first, a stored first)', false],
    ['at the same time', true],
  ])('%s: one data key, every machine pulls it, nothing lost', async (_name, together) => {
    gate ??= await holdingGate(rig.server.url);
    // Both machines talk to the server through the gate, which forwards everything unless told to hold a push.
    const { a, b, key } = await (pair ??= encryptedPair(rig.root, { ...rig.server, url: gate.url }));
    const id = await a.newSession();
    await a.say(id, 'first words', 'second words');
    // The same file on the other machine, as a copy of the sessions folder would leave it.
    const aFile = a.fileOf(id);
    const bFile = copySession(a, b, id);
    await b.say(id, 'b: only on b');
    await a.say(id, 'a: only on a');

    if (together) {
      // (Without --json: its notes, which would say a batch was sealed again under another key, go to stderr.)
      const [ra, rb] = await Promise.all([a.run(['push']), b.run(['push'])]);
      for (const r of [ra, rb]) {
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).not.toMatch(/another data key/);
      }
    } else {
      // b's first batch is held at the gate (its key chosen and sealed, the meta not stored yet) while a pushes the
      // whole session: b's push then arrives second, with a meta under another data key.
      const held = gate.holdNextPush();
      const bPush = b.run(['push']);
      await held;
      expect(await a.ok(['push', '--json'])).toMatchObject({ failed: 0 });
      gate.release();
      const rb = await bPush;
      expect(rb.code, rb.stderr).toBe(0);
      // Sealed under the same key as a's: the server took it as it was, nothing sealed again.
      expect(rb.stderr).not.toMatch(/another data key/);
    }
    // One key: the stored meta wraps the key both machines derived for the id.
    const keys = await deriveKeys(await importAccountKey(key));
    const stored = await new ApiClient({ url: rig.server.url, token: rig.server.token }).sessionMeta(id);
    expect(stored.sealed).toMatchObject({ keyId: keys.keyId, wrappedKey: (await deriveSessionKey(keys, id)).wrappedKey });
    // Each machine then pulls the other's entries: no batch sealed under a key the other never saw blocks it.
    for (const m of [a, b, a, b]) {
      const r = await m.run(['sync', '--json']);
      expect(r.stderr).not.toMatch(/fails authentication/);
      if (r.code !== 0) throw new Error(`sync exited ${r.code}: ${r.stderr} ${r.stdout}`);
      expect(r.json()).toMatchObject({ failed: 0, createdSessions: 0 });
    }
    const want = [...entrySet(aFile).entries()].sort();
    expect([...entrySet(bFile).entries()].sort()).toEqual(want);
    const text = JSON.stringify(want);
    for (const t of ['first words', 'second words', 'b: only on b', 'a: only on a']) expect(text).toContain(t);
  }, 120_000);
});
