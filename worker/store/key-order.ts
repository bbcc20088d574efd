// Key order shared by every BlobStore: UTF-8 byte order, as S3 and R2 list.

/**
 * Orders keys by their UTF-8 bytes, as S3 and R2 do. UTF-16 order agrees except where a surrogate
 * (U+10000 and up) meets U+E000..U+FFFF, so only that case is corrected; nothing is allocated.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
