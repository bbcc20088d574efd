// Builds what a share uploads: the branch up to one entry, redacted (then re-scanned), encrypted with a fresh key.
import type { SessionEntry, SessionHeader } from '../../shared/entry.js';
import { SessyncError } from '../../shared/errors.js';
import { describeCounts, redactValue, scanValue, totalOf, type RedactOptions, type RedactionCounts } from '../../shared/redact.js';
import { encryptShare, newShareKey } from '../../shared/share-crypto.js';
import { buildSharePayload, encodeSharePayload, type SharePayload } from '../../shared/share-payload.js';
import { toJsonText } from '../../shared/json-stringify.js';

export interface PreparedShare {
  payload: SharePayload;
  ciphertext: string;
  key: string;
  /** What redaction replaced, by kind; null with --no-redact. */
  redacted: RedactionCounts | null;
}

/** An entry with its `value` and the exact `line` it was read from (a Codex line) is redacted through its value alone. */
function withoutLine(e: SessionEntry): SessionEntry {
  if (typeof e.line !== 'string' || e.value === undefined) return e;
  const { line: _line, ...rest } = e;
  return rest;
}

/**
 * The exact line travels again only when redaction left its value as it was, so it lands byte for byte; a redacted
 * line travels as its value only. The line is never redacted as text: JSON escapes would hide a secret from the rules.
 */
function keepExactLine(before: SessionEntry, after: SessionEntry): SessionEntry {
  if (typeof before.line !== 'string' || before.value === undefined) return after;
  return toJsonText(after.value) === toJsonText(before.value) ? { ...after, line: before.line } : after;
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
    const r = redactValue({ header: payload.header, entries: payload.entries.map(withoutLine) }, redact);
    r.value.entries = r.value.entries.map((e, i) => keepExactLine(payload.entries[i]!, e));
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
