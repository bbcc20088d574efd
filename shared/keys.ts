// Every object key the service writes is built here, from names already checked against NAME_RE.
import { NAME_RE } from './wire.js';
import { SessyncError } from './errors.js';

const SEQ_WIDTH = 12;

function name(kind: string, v: string): string {
  if (!NAME_RE.test(v)) throw new SessyncError('bad_input', `${kind} "${v.slice(0, 80)}" is not a valid name (letters, digits, - and _ only)`);
  return v;
}

function hex(kind: string, v: string): string {
  if (!/^[0-9a-f]{64}$/.test(v)) throw new SessyncError('bad_input', `${kind} must be a sha-256 hex digest`);
  return v;
}

export function seqPart(seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new SessyncError('bad_input', `seq ${seq} is not a non-negative integer`);
  return String(seq).padStart(SEQ_WIDTH, '0');
}

export function parseSeqPart(s: string): number | null {
  return /^\d{12}$/.test(s) ? Number(s) : null;
}

export const keys = {
  /** Token record, by the SHA-256 of the bearer token. */
  token: (tokenHash: string) => `tokens/${hex('token hash', tokenHash)}`,
  account: (account: string) => `accounts/${name('account', account)}`,
  sessionPrefix: (account: string, session: string) => `a/${name('account', account)}/s/${name('session', session)}/`,
  sessionMeta: (account: string, session: string) => `${keys.sessionPrefix(account, session)}meta`,
  batchPrefix: (account: string, session: string, host: string) => `${keys.sessionPrefix(account, session)}b/${name('host', host)}/`,
  batch: (account: string, session: string, host: string, seq: number) => `${keys.batchPrefix(account, session, host)}${seqPart(seq)}`,
  /** One key per (session, host) naming its highest seq; listing the prefix is the account's change feed. */
  headsPrefix: (account: string) => `a/${name('account', account)}/heads/`,
  sessionHeadsPrefix: (account: string, session: string) => `${keys.headsPrefix(account)}${name('session', session)}/`,
  hostHeadsPrefix: (account: string, session: string, host: string) => `${keys.sessionHeadsPrefix(account, session)}${name('host', host)}/`,
  head: (account: string, session: string, host: string, seq: number) => `${keys.hostHeadsPrefix(account, session, host)}${seqPart(seq)}`,
  /** Share ciphertext and record, by the SHA-256 of the share token. */
  share: (tokenHash: string) => `shares/${hex('share hash', tokenHash)}`,
  accountSharesPrefix: (account: string) => `a/${name('account', account)}/shares/`,
  accountShare: (account: string, shareId: string) => `${keys.accountSharesPrefix(account)}${name('share id', shareId)}`,
  /** Pointer from a session to a share made of it (holds the token hash): deleting the session finds its shares here. */
  sessionShare: (account: string, session: string, shareId: string) => `${keys.sessionPrefix(account, session)}shares/${name('share id', shareId)}`,
  /**
   * A share of a deleted session that its deletion could not revoke (its records are damaged): every answer of the
   * deletion names it until its owner revokes it by the link (or undeletes the session). Under the account, not the
   * session: a revocation by the link knows the share's id but not its session (the entry that said it is damaged).
   */
  unrevokedPrefix: (account: string) => `a/${name('account', account)}/unrevoked/`,
  sessionUnrevokedPrefix: (account: string, session: string) => `${keys.unrevokedPrefix(account)}${name('session', session)}/`,
  unrevokedShare: (account: string, session: string, shareId: string) => `${keys.sessionUnrevokedPrefix(account, session)}${name('share id', shareId)}`,
  /** The account's index of its tokens, by token id (the record itself stays under keys.token). */
  accountTokensPrefix: (account: string) => `a/${name('account', account)}/tokens/`,
  accountToken: (account: string, tokenId: string) => `${keys.accountTokensPrefix(account)}${name('token id', tokenId)}`,
  /** A deleted session's tombstone (session id, time, which host asked); listed with the changes feed. */
  tombstonesPrefix: (account: string) => `a/${name('account', account)}/deleted/`,
  tombstone: (account: string, session: string) => `${keys.tombstonesPrefix(account)}${name('session', session)}`,
  /** Limits the admin set for the account (absent: no quota), and the usage counted against them. */
  quota: (account: string) => `a/${name('account', account)}/quota`,
  usage: (account: string) => `a/${name('account', account)}/usage`,
  /** The account's end-to-end encryption key record (absent: a plaintext account). Holds no key, only its id and check. */
  accountKey: (account: string) => `a/${name('account', account)}/key`,
  /** Written once per rotation away from `keyId` (holds the new key's id): of two racing rotations only one wins. */
  keyRotation: (account: string, keyId: string) => `a/${name('account', account)}/key-rotations/${name('key id', keyId)}`,
};

/** Parses a head key back into its parts, or null when the key is not one. */
export function parseHeadKey(account: string, key: string): { session: string; host: string; seq: number } | null {
  const prefix = keys.headsPrefix(account);
  if (!key.startsWith(prefix)) return null;
  const [session, host, seqS, ...rest] = key.slice(prefix.length).split('/');
  if (rest.length || !session || !host || !seqS) return null;
  const seq = parseSeqPart(seqS);
  return seq === null ? null : { session, host, seq };
}
