// Buffers a push reads session files into, used again once the batch they held is acknowledged.

/**
 * Sizes of the buffers (powers of two from 64 KiB): a read takes the smallest that holds it. A many-session push reads
 * a hundred megabytes in files of a few hundred kilobytes each; fresh buffers for them cost a page fault per 4 KiB and
 * the collections that their external memory sets off, which together cost about as much as reading them.
 */
const MIN_BITS = 16;

/** Free bytes kept at most: about what three requests in flight hold, so a push's reads settle into the same buffers. */
const MAX_FREE_BYTES = 32 * 1024 * 1024;

/** The whole buffers this module made (by their memory), so only those are ever taken back. */
const ours = new WeakSet<ArrayBuffer>();
/** Free buffers per size class (index: bits - MIN_BITS), and the memory of those, so none is put back twice. */
const free: Buffer[][] = [];
const isFree = new WeakSet<ArrayBuffer>();
let freeBytes = 0;

/** Buffers made, given back and taken again, for tests and benches. */
export const readBufferCounts = { made: 0, given: 0, reused: 0 };

function classOf(len: number): number {
  let bits = MIN_BITS;
  while (2 ** bits < len) bits++;
  return bits - MIN_BITS;
}

/**
 * A buffer of `len` bytes to read into: its contents are whatever was there (the read fills what is looked at). It is
 * the caller's until given back with recycleRead, or for good (the collector takes it) if never given back.
 */
export function readBuffer(len: number): Buffer {
  const c = classOf(len);
  const whole = free[c]?.pop();
  if (whole) {
    isFree.delete(whole.buffer as ArrayBuffer);
    freeBytes -= whole.byteLength;
    readBufferCounts.reused++;
    return whole.subarray(0, len);
  }
  // Not Buffer.allocUnsafe: that may carve small buffers from a pool shared with other code.
  const made = Buffer.allocUnsafeSlow(2 ** (c + MIN_BITS));
  ours.add(made.buffer as ArrayBuffer);
  readBufferCounts.made++;
  return made.subarray(0, len);
}

/**
 * Gives back the buffer under `bytes` (any view of one readBuffer made): the caller holds no view of it any more, and
 * nothing else does (a batch acknowledged by the server, a read that kept none of its bytes). Anything else is ignored.
 */
export function recycleRead(bytes: Uint8Array): void {
  const mem = bytes.buffer as ArrayBuffer;
  if (!ours.has(mem) || isFree.has(mem) || freeBytes + mem.byteLength > MAX_FREE_BYTES) return;
  isFree.add(mem);
  freeBytes += mem.byteLength;
  readBufferCounts.given++;
  (free[classOf(mem.byteLength)] ??= []).push(Buffer.from(mem));
}
