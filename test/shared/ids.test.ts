// Ids: UUIDv7 for new entries, legacy ids recognised, deterministic ids stable across runs and machines.
import { describe, expect, it } from 'vitest';
import { deterministicId, isLegacyId, isUuidV7, newId } from '../../shared/ids.js';

describe('ids', () => {
  it('newId is a UUIDv7, unique, and sorts in creation order', () => {
    const ids = Array.from({ length: 2000 }, () => newId());
    for (const id of ids) expect(isUuidV7(id)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('tells UUIDv7 from v4 and from legacy ids', () => {
    expect(isUuidV7('0190a6e0-0000-7000-8000-000000000000')).toBe(true);
    expect(isUuidV7('ffae836b-9420-4060-ac13-7745215f90ff')).toBe(false); // v4
    expect(isUuidV7('a1b2c3d4')).toBe(false);
    expect(isLegacyId('a1b2c3d4')).toBe(true);
    expect(isLegacyId('a1b2c3d4e')).toBe(false);
  });

  it('deterministicId depends only on the seed and is UUID-shaped (version 8)', async () => {
    const a = await deterministicId('ffae836b-9420-4060-ac13-7745215f90ff:1');
    expect(await deterministicId('ffae836b-9420-4060-ac13-7745215f90ff:1')).toBe(a);
    expect(await deterministicId('ffae836b-9420-4060-ac13-7745215f90ff:2')).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Pinned value: a change here would make two versions of sessync disagree on migrated ids.
    expect(await deterministicId('s:1')).toBe('1b25f38c-1aa8-853b-8324-0e793e2562c5');
  });
});
