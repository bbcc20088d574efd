// SQLite's write-ahead log applied to its database bytes (a checkpoint in memory): Codex's index lives mostly in its WAL.
// Format: sqlite.org/fileformat2.html#walformat. Only frames with matching salts and checksums, up to the last commit.

function checksum(buf: Uint8Array, start: number, end: number, s: [number, number], bigEndian: boolean): [number, number] {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let [s0, s1] = s;
  for (let i = start; i < end; i += 8) {
    const x0 = v.getUint32(i, !bigEndian);
    const x1 = v.getUint32(i + 4, !bigEndian);
    s0 = (s0 + x0 + s1) >>> 0;
    s1 = (s1 + x1 + s0) >>> 0;
  }
  return [s0, s1];
}

/** The database as a checkpoint would leave it: `db` with the committed frames of `wal` applied. Throws on a bad WAL header. */
export function applyWal(db: Uint8Array, wal: Uint8Array): Uint8Array {
  if (wal.length < 32) return db;
  const v = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const magic = v.getUint32(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) throw new Error('not a SQLite WAL file');
  const bigEndian = magic === 0x377f0683;
  const pageSize = v.getUint32(8) === 1 ? 65536 : v.getUint32(8);
  const salt1 = v.getUint32(16);
  const salt2 = v.getUint32(20);
  let s = checksum(wal, 0, 24, [0, 0], bigEndian);
  if (s[0] !== v.getUint32(24) || s[1] !== v.getUint32(28)) return db; // a WAL whose header is not valid holds nothing
  const pages = new Map<number, Uint8Array>();
  let committed = new Map<number, Uint8Array>();
  let size = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (v.getUint32(at + 8) !== salt1 || v.getUint32(at + 12) !== salt2) break;
    s = checksum(wal, at, at + 8, s, bigEndian);
    s = checksum(wal, at + 24, at + 24 + pageSize, s, bigEndian);
    if (s[0] !== v.getUint32(at + 16) || s[1] !== v.getUint32(at + 20)) break;
    pages.set(v.getUint32(at), wal.subarray(at + 24, at + 24 + pageSize));
    const commitSize = v.getUint32(at + 4);
    if (commitSize !== 0) {
      committed = new Map(pages);
      size = commitSize;
    }
  }
  if (committed.size === 0) return db;
  const out = new Uint8Array(size * pageSize);
  out.set(db.subarray(0, Math.min(db.length, out.length)));
  for (const [no, page] of committed) if (no >= 1 && no <= size) out.set(page, (no - 1) * pageSize);
  return out;
}
