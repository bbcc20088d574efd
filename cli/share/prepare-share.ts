// Builds what a share uploads: the branch up to one entry, redacted (then re-scanned), encrypted with a fresh key.
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { describeCounts, redactValue, scanValue, totalOf, type RedactOptions, type RedactionCounts } from '../../shared/redact.js';
import { encryptShare, newShareKey } from '../../shared/share-crypto.js';
import { buildSharePayload, encodeSharePayload, type SharePayload } from '../../shared/share-payload.js';

export interface PreparedShare {
  payload: SharePayload;
  ciphertext: string;
  key: string;
  /** What redaction replaced, by kind; null with --no-redact. */
  redacted: RedactionCounts | null;
}

/**
 * `branch` is root..ENTRY of one session. With `redact` set, every string of the header and the
 * entries is redacted, then the result is scanned again with the same rules: anything still found
 * blocks the share, so a redaction bug cannot leak what it was meant to catch.
 */
export async function prepareShare(header: SessionHeader, branch: SessionEntry[], redact: RedactOptions | null): Promise<PreparedShare> {
  let payload = buildSharePayload(header, branch);
  let redacted: RedactionCounts | null = null;
  if (redact) {
    const r = redactValue({ header: payload.header, entries: payload.entries }, redact);
    const left = scanValue(r.value, redact);
    if (totalOf(left) > 0) {
      throw new SessyncError('forbidden', `the share was blocked: after redaction a scan still finds ${describeCounts(left)}. Nothing was uploaded. Share an earlier entry with --at, or --no-redact if you are sure.`, {
        details: { remaining: left },
      });
    }
    payload = { ...payload, header: r.value.header, entries: r.value.entries };
    redacted = r.counts;
  }
  const key = newShareKey();
  const ciphertext = await encryptShare(encodeSharePayload(payload), key);
  return { payload, ciphertext, key, redacted };
}
