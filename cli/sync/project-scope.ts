// Which project keys are this folder's: its own key, plus every key mapped to it (--map now, or a saved mapping).
import { realpath } from 'node:fs/promises';
import { sessyncHome } from '../store/paths.js';
import { projectKey } from './project-key.js';
import { SyncState } from './sync-state.js';

/** The saved key -> folder mappings of this SESSYNC_HOME (machine-wide, whatever the server). */
export async function savedProjectMap(env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  // The map lives in sync/ itself, not under a server: any server key names the same file.
  return new SyncState(sessyncHome(env), 'none').projectMap();
}

async function samePlace(a: string, realDir: string): Promise<boolean> {
  if (a === realDir) return true;
  return (await realpath(a).catch(() => a)) === realDir;
}

/**
 * Keys whose sessions belong in the folder `realDir`: its own key, and every key that `maps` (this run's --map)
 * or the saved map files under it. Without this, a project with no git (key `path:/old/place`) pulled to a new
 * path would need --all: its key never equals the new folder's.
 */
export async function projectKeysHere(ctx: { state: SyncState }, realDir: string, maps: Record<string, string>): Promise<Set<string>> {
  const keys = new Set([await projectKey(realDir)]);
  const saved = await ctx.state.projectMap();
  for (const [key, dir] of Object.entries({ ...saved, ...maps })) if (await samePlace(dir, realDir)) keys.add(key);
  return keys;
}
