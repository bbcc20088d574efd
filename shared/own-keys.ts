// Records keyed by user or server input (host ids, session ids, entry ids, field names): own keys only, never Object.prototype's.

/** A record with no prototype: `constructor`, `toString` and `__proto__` are ordinary keys in it. */
export function nullRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A null-prototype copy of `from`'s own enumerable keys (a parsed state file, a server answer); null/undefined give an empty one. */
export function toNullRecord<T>(from: Readonly<Record<string, T>> | null | undefined): Record<string, T> {
  const out = nullRecord<T>();
  if (from && typeof from === 'object') for (const k of Object.keys(from)) out[k] = from[k]!;
  return out;
}

/** The value of an own key, or undefined: a key named `constructor` does not read Object.prototype's function. */
export function ownValue<T>(o: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

/** Sets an own data property, even for `__proto__` (a plain assignment would change the prototype and lose the key). */
export function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}
