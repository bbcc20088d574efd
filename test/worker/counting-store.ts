// A real store underneath that logs each call the app makes (a wrapper, not a mock: every call reaches the store).
import { CountedStore, type StoreCall } from '../../worker/store/counted-store.js';

/** The worker's CountedStore, each call also logged as `<call> <key>` (a list by its prefix), for tests to read. */
export class CountingStore extends CountedStore {
  calls: string[] = [];
  protected override count(call: StoreCall, key: string): void {
    super.count(call, key);
    this.calls.push(`${call} ${key}`);
  }
}
