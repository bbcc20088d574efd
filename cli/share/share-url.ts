// Share links: `<server>/s/<token>#<key>`, built after upload and taken apart by import and unshare.
import { SessyncError } from '../../shared/errors.js';
import { SHARE_KEY_RE, SHARE_TOKEN_RE } from '../../shared/share-crypto.js';

export interface ShareLink {
  /** The server the link points at, without a trailing slash (keeps a path prefix). */
  server: string;
  token: string;
  /** Absent when the fragment was cut off. */
  key?: string;
}

export function buildShareUrl(server: string, token: string, key: string): string {
  return `${server.replace(/\/+$/, '')}/s/${token}#${key}`;
}

/** Parses a share link; null when `text` is not a URL with /s/<token>. */
export function parseShareUrl(text: string): ShareLink | null {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return null; // not a URL: callers try it as an id or token
  }
  const m = /^(.*)\/s\/([^/]+)\/?$/.exec(u.pathname);
  if (!m || !SHARE_TOKEN_RE.test(m[2]!)) return null;
  const key = u.hash.slice(1);
  return { server: u.origin + m[1]!, token: m[2]!, ...(key ? { key } : {}) };
}

/** A link that import can use: a token and a well-formed key, or an error that says what is missing. */
export function requireFullLink(text: string): ShareLink & { key: string } {
  const link = parseShareUrl(text);
  if (!link) throw new SessyncError('bad_input', `"${text.slice(0, 200)}" is not a share link: expected <server>/s/<token>#<key>`);
  if (!link.key) throw new SessyncError('bad_input', 'the link has no key (the part after #): copy the whole link; the key never reaches the server');
  if (!SHARE_KEY_RE.test(link.key)) throw new SessyncError('bad_input', 'the key after # is malformed: copy the whole link');
  return { ...link, key: link.key };
}
