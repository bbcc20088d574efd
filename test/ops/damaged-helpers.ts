// Shared by the damaged-record suites: the server's error log captured per test, and the answer a damaged record must give.
import { afterEach, beforeEach, expect } from 'vitest';

/** What console.error printed during the current test (cleared before each); the server logs damaged keys there. */
export function captureErrors(): string[] {
  const logged: string[] = [];
  const orig = console.error;
  beforeEach(() => {
    logged.length = 0;
    console.error = (...a: unknown[]) => void logged.push(a.map(String).join(' '));
  });
  afterEach(() => {
    console.error = orig;
  });
  return logged;
}

/** A 422 `corrupt`, not retryable, whose message matches `what`. */
export function expectCorrupt(r: { status: number; json: any }, what: RegExp): void {
  expect(r.status).toBe(422);
  expect(r.json.error).toMatchObject({ code: 'corrupt', retryable: false });
  expect(r.json.error.message).toMatch(what);
}
