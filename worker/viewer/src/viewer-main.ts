// The viewer's script: fetches the share's ciphertext, decrypts it with the key from the URL fragment, renders in chunks.
import { decryptShare } from '../../../shared/share-crypto.js';
import { decodeSharePayload } from '../../../shared/share-payload.js';
import { EntryRenderer } from './render-entries.js';

/** Entries appended per frame: keeps the page responsive while a 10 MB session renders. */
const ENTRIES_PER_FRAME = 150;

function byId(id: string): HTMLElement {
  const e = document.getElementById(id);
  if (!e) throw new Error(`viewer page has no #${id}`);
  return e;
}

function setStatus(text: string, error = false): void {
  const s = byId('status');
  s.textContent = text;
  s.classList.toggle('error', error);
}

function nextFrame(): Promise<void> {
  return new Promise((r) => (typeof requestAnimationFrame === 'function' ? requestAnimationFrame(() => r()) : setTimeout(r, 0)));
}

async function errorMessage(res: Response): Promise<string> {
  let server = '';
  let retryable = true;
  try {
    const body = (await res.json()) as { error?: { message?: unknown; retryable?: unknown } };
    if (typeof body.error?.message === 'string') server = body.error.message;
    if (body.error?.retryable === false) retryable = false;
  } catch {
    // Not JSON (a proxy's error page): the status alone has to do.
  }
  if (res.status === 404) return `This share does not exist or was removed. ${server}`.trim();
  if (res.status === 410) return `This share is no longer available: ${server || 'it was revoked or has expired'}.`;
  // A damaged share (422 corrupt) stays so until its owner acts: "try again later" would send the reader round in circles.
  return `The server answered ${res.status}${server ? `: ${server}` : ''}.${retryable ? ' Try again later.' : ''}`;
}

async function run(): Promise<void> {
  const token = location.pathname.split('/').filter(Boolean).pop() ?? '';
  const key = location.hash.slice(1);
  if (!key) {
    setStatus('This link has no key (the part after #). Ask for the complete link: the key never reaches the server.', true);
    return;
  }
  let res: Response;
  try {
    res = await fetch(new URL(`../v1/shares/${encodeURIComponent(token)}/blob`, location.href), { cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    setStatus(`Could not reach the server: ${(e as Error).message}`, true);
    return;
  }
  if (!res.ok) {
    setStatus(await errorMessage(res), true);
    return;
  }
  const blob = (await res.json()) as { ciphertext: string; expiresAt: string };
  setStatus('Decrypting…');
  let payload;
  try {
    payload = decodeSharePayload(await decryptShare(blob.ciphertext, key));
  } catch (e) {
    setStatus((e as Error).message, true);
    return;
  }
  const h = payload.header;
  const title = typeof h.name === 'string' ? h.name : `Session ${h.id.slice(0, 8)}`;
  document.title = `${title} · shared session`;
  byId('meta').textContent = `${payload.entries.length.toLocaleString()} entries · started ${h.timestamp} · shared ${payload.createdAt} · link expires ${blob.expiresAt}`;
  const renderer = new EntryRenderer(byId('log'));
  const entries = payload.entries;
  for (let i = 0; i < entries.length; i += ENTRIES_PER_FRAME) {
    for (const e of entries.slice(i, i + ENTRIES_PER_FRAME)) renderer.add(e);
    if (i + ENTRIES_PER_FRAME < entries.length) {
      setStatus(`Rendering… ${(i + ENTRIES_PER_FRAME).toLocaleString()} of ${entries.length.toLocaleString()} entries`);
      await nextFrame();
    }
  }
  setStatus('');
  document.body.dataset.rendered = String(renderer.count);
}

run().catch((e: unknown) => setStatus(`The viewer failed: ${(e as Error)?.message ?? String(e)}`, true));
