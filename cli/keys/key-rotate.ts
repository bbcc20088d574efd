// `sessync key rotate`: a new account key, every session's data key re-wrapped under it (batches untouched); re-running finishes an interrupted one.
import { SessyncError, isSessyncError } from '../../shared/errors.js';
import { deriveKeys, exportAccountKey, keyCheck, rewrapSessionKey, unwrapSessionKey, type AccountKey, type DerivedKeys } from '../../shared/sync-crypto.js';
import { saveKey, loadKey } from './key-store.js';
import { createAccountKey, type KeyScope } from './key-actions.js';
import { verifyKey } from './sync-keys.js';

export interface RotateResult {
  keyId: string;
  replaced: string;
  exported: string;
  /** Sessions whose data key was re-wrapped under the new key by this run. */
  rewrapped: number;
  /** Sessions already under the new key. */
  current: number;
  /** Sessions under a key this machine does not hold (named; re-wrapped by a machine that holds it). */
  left: { session: string; keyId: string }[];
}

/**
 * Order, so that a kill at any point loses nothing and a re-run completes: the new key is saved here (the old one
 * kept beside it), then sent to the server, then each session is re-wrapped. A re-run that finds the server still
 * on the old key sends the saved new one; one that finds sessions under an older key it holds re-wraps them.
 */
export async function rotateKey(s: KeyScope, note: (t: string) => void): Promise<RotateResult> {
  const remote = await s.api.accountKey();
  if (!remote.encrypted) throw new SessyncError('not_encrypted', 'this account is not end-to-end encrypted: `sessync key init` encrypts it (there is no key to rotate)');
  const stored = await loadKey(s.env, s.api.url, s.account);
  let next: AccountKey;
  let exported: string;
  let held: AccountKey[];
  const interrupted = stored?.previous.find((p) => p.keyId === remote.keyId);
  if (stored && stored.key.keyId !== remote.keyId && interrupted && (await keyCheck(await deriveKeys(interrupted))) === remote.check) {
    // The new key was saved here but never reached the server: send it now.
    note(`finishing an interrupted rotation: sending key ${stored.key.keyId} (replacing ${remote.keyId})`);
    next = stored.key;
    exported = await exportAccountKey(next);
    await s.api.putAccountKey({ keyId: next.keyId, check: await keyCheck(await deriveKeys(next)), replaces: remote.keyId });
    held = stored.previous;
  } else {
    await verifyKey(remote, stored?.key ?? null); // the key here must be the account's before it can be replaced
    const made = await createAccountKey(s, { replaces: remote.keyId, previous: [stored!.key, ...stored!.previous] });
    next = made.key;
    exported = made.exported;
    held = [stored!.key, ...stored!.previous];
  }
  const nextKeys = await deriveKeys(next);
  const byId = new Map<string, DerivedKeys>();
  for (const k of held) if (!byId.has(k.keyId)) byId.set(k.keyId, await deriveKeys(k));
  const result: RotateResult = { keyId: next.keyId, replaced: remote.keyId, exported, rewrapped: 0, current: 0, left: [] };
  const sessions = [...new Set((await s.api.allHeads()).map((h) => h.session))];
  for (const session of sessions) {
    let meta;
    try {
      meta = await s.api.sessionMeta(session);
    } catch (e) {
      if (isSessyncError(e, 'not_found')) continue;
      throw e;
    }
    const sealed = meta.sealed;
    if (!sealed) {
      result.left.push({ session, keyId: '(plaintext: run `sessync key init`)' });
      continue;
    }
    if (sealed.keyId === next.keyId) {
      result.current++;
      continue;
    }
    const old = byId.get(sealed.keyId);
    if (!old) {
      result.left.push({ session, keyId: sealed.keyId });
      note(`session ${session}: its data key is wrapped under key ${sealed.keyId}, which this machine does not hold; not re-wrapped`);
      continue;
    }
    const re = await rewrapSessionKey(await unwrapSessionKey(old, sealed.wrappedKey, sealed.keyId, session), nextKeys);
    await s.api.putSessionKey(session, { keyId: next.keyId, wrappedKey: re.wrappedKey, replaces: sealed.keyId });
    result.rewrapped++;
  }
  // Every session is under the new key: the old ones are kept only while something may still need them.
  if (result.left.length === 0) await saveKey(s.env, s.api.url, s.account, exported, []);
  return result;
}
