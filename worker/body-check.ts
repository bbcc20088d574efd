// A push body's checks fed part by part as it arrives: its SHA-256 and whether every line is an entry the scan is certain of.
import { LIMITS } from '../shared/wire.js';
import { releaseScanned, scanEntry } from '../shared/entry-line-scan.js';
import { concatChunks } from '../shared/batch-frames.js';
import { startSha256 } from './sha256.js';

const NEWLINE = 0x0a;

/**
 * Whether a body, given part by part (in any split), is lines that the line checks of validateBatch certainly accept:
 * none over LIMITS.maxEntryBytes, each one an entry scanEntry is certain of. A line that crosses from one part into
 * the next is copied (that line only) and scanned whole once its end has come. `certain` false means "not certain",
 * and the full checks decide.
 */
export class LineCheck {
  private lines = 0;
  private ok = true;
  /** The start of a line whose newline has not come yet (views into the parts), and its bytes. */
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private done = false;

  add(b: Uint8Array): void {
    if (!this.ok || this.done || b.byteLength === 0) return;
    try {
      this.scan(b);
    } finally {
      releaseScanned(); // the body is the request's: not kept alive by the scan until the next push
    }
  }

  /** Whether the body was exactly `entryCount` certain lines (a final '\n' optional); no part may be added after. */
  certain(entryCount: number): boolean {
    if (!this.done) {
      this.done = true;
      // The last line, when the body does not end with '\n'.
      if (this.ok && this.held.length > 0) {
        const line = this.takeHeld();
        if (scanEntry(line, 0, line.byteLength, LIMITS.maxJsonDepth) === line.byteLength) this.lines++;
        else this.ok = false;
        releaseScanned();
      }
    }
    return this.ok && entryCount <= LIMITS.maxEntriesPerBatch && this.lines === entryCount;
  }

  private scan(b: Uint8Array): void {
    let start = 0;
    if (this.held.length > 0) {
      const at = b.indexOf(NEWLINE);
      if (at < 0) return this.hold(b);
      if (this.heldBytes + at > LIMITS.maxEntryBytes) return this.fail();
      this.held.push(b.subarray(0, at + 1));
      const length = this.heldBytes + at;
      const line = this.takeHeld();
      if (scanEntry(line, 0, line.byteLength, LIMITS.maxJsonDepth) !== length) return this.fail();
      this.counted();
      start = at + 1;
    }
    while (start < b.length && this.ok) {
      // The scan finds where the line ends (the '\n' after its value), so the part is walked once.
      const nl = scanEntry(b, start, b.length, LIMITS.maxJsonDepth);
      if (nl >= 0 && nl < b.length) {
        if (nl - start > LIMITS.maxEntryBytes) return this.fail();
        this.counted();
        start = nl + 1;
        continue;
      }
      // Certain as far as this part goes, or not certain of a line that may go on in the next part: held till its end.
      if (nl < 0 && b.indexOf(NEWLINE, start) >= 0) return this.fail();
      return this.hold(b.subarray(start));
    }
  }

  private counted(): void {
    // More lines than a batch may hold is never certain: no need to scan the rest.
    if (++this.lines > LIMITS.maxEntriesPerBatch) this.fail();
  }

  private hold(piece: Uint8Array): void {
    this.held.push(piece);
    this.heldBytes += piece.byteLength;
    if (this.heldBytes > LIMITS.maxEntryBytes) this.fail();
  }

  private takeHeld(): Uint8Array {
    const line = this.held.length === 1 ? this.held[0]! : concatChunks(this.held);
    this.held = [];
    this.heldBytes = 0;
    return line;
  }

  private fail(): void {
    this.ok = false;
    this.held = [];
    this.heldBytes = 0;
  }
}

/** allLinesCertain over a whole body's parts. */
export function allLinesCertain(parts: readonly Uint8Array[], entryCount: number): boolean {
  const check = new LineCheck();
  for (const p of parts) check.add(p);
  return check.certain(entryCount);
}

/**
 * What a push body's checks found as its parts came (BatchPush.checked): the hash, where the runtime hashes part by
 * part, and the line check, for a body sent as JSONL. validateBatch takes them instead of walking the body again.
 */
export class BodyCheck {
  private readonly hash = startSha256();
  private readonly lineCheck: LineCheck | null;

  /** `lines`: the frame's header says jsonl (a hint only: validateBatch asks for the lines only of a jsonl envelope). */
  constructor(lines: boolean) {
    this.lineCheck = lines ? new LineCheck() : null;
  }

  add(part: Uint8Array): void {
    this.hash?.update(part);
    this.lineCheck?.add(part);
  }

  private digest: string | null | undefined;

  /** The body's SHA-256 (hex), or null when it was not hashed as it came. */
  sha256(): string | null {
    if (this.digest === undefined) this.digest = this.hash ? this.hash.hex() : null;
    return this.digest;
  }

  /** As allLinesCertain of the body, or null when its lines were not checked as they came. */
  linesCertain(entryCount: number): boolean | null {
    return this.lineCheck ? this.lineCheck.certain(entryCount) : null;
  }
}
