// The BlobStore conformance suite on the in-memory store.
import { MemoryStore } from '../../worker/store/memory-store.js';
import { describeBlobStore } from './blob-store.case.js';

describeBlobStore('memory', async () => ({ store: new MemoryStore() }));
