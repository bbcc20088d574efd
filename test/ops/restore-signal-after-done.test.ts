// restore of a pi session with Claude Code's folder present: a signal after pi's run restored the session (while the
// next agent is asked) ends the run with the session listed as restored, exit 0, not `interrupted` (whose advice, the
// same command again, would then fail with not_found).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Machine, runCli, useServer } from '../sync/helpers.js';

describe('restore: a signal once the session is restored', () => {
  const rig = useServer(undefined, 'sessync-restore-signal-done-');
  it('SIGINT after pi\'s run compacted its state: exit 0, the session listed, the file back; a second restore is not needed', async () => {
    const claudeDir = join(rig.root, 'a', 'claude');
    mkdirSync(join(claudeDir, 'projects'), { recursive: true });
    const a = new Machine(rig.root, 'a', { remote: 'git@github.com:acme/restore-signal-done.git', env: { CLAUDE_CONFIG_DIR: claudeDir } });
    await a.login(rig.server);
    const id = await a.newSession();
    await a.say(id, 'one', 'two');
    await a.ok(['push', '--json']);
    const file = a.fileOf(id);
    await a.ok(['rm', id, '--json']);
    expect(existsSync(file)).toBe(false);
    const r = await runCli(['restore', id, '--json', '--cwd', a.project], { env: { ...a.env, SESSYNC_KILL_POINT: 'compacted-one:1', SESSYNC_KILL_SIGNAL: 'SIGINT' } });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { restored: { session: string }[]; stopped?: string };
    expect(out.restored.map((s) => s.session)).toEqual([id]);
    // The signal did land while the next agent was asked (the path under test), and the run says so.
    expect(out.stopped).toBe('SIGINT');
    expect(existsSync(file)).toBe(true);
  }, 60_000);
});
