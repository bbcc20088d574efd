// sessync's own store beside pi's folder: sessions left there when pi was set up later are named, never passed over silently.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sessionsRoot, sessyncHome } from '../store/paths.js';
import { piSessionsHere } from './pi-paths.js';

/**
 * When sessync works in pi's folder but its own store also holds sessions (synced before pi was set up here), says
 * so: those are not synced from there, and ones synced before look deleted here to a sync.
 */
export async function noteOwnStoreAside(env: NodeJS.ProcessEnv, note: (t: string) => void): Promise<void> {
  const root = sessionsRoot(env);
  const own = join(sessyncHome(env), 'sessions');
  if (root === own || root !== piSessionsHere(env) || env.SESSYNC_SESSIONS_DIR) return;
  const folders = await readdir(own).catch(() => [] as string[]);
  if (folders.length === 0) return;
  note(`sessions are synced from pi's folder ${root}; the ${folders.length} project folder(s) in ${own} are not (move them into ${root}, or pass --sessions-dir ${own})`);
}
