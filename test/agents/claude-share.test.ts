// Share of a Claude Code session: redacted and encrypted here, read in headless Chromium (messages, thinking and tool
// calls collapsed, no secret), imported on another machine as a new Claude Code session the real claude resumes.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { ClaudeMachine } from './claude-rig.js';
import { claude, conversationTexts, findClaude } from './claude-cli.js';
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic.js';
import { FIXTURES } from './fixture-samples.js';
import { CHROMIUM_CANDIDATES, chromiumPath, useViewerBrowser } from './viewer-browser.js';

const found = await findClaude();
const MAIN = join(FIXTURES, 'claude-code', 'lanegrid__agtrace__claude_session.jsonl');
const AGENT = join(FIXTURES, 'claude-code', 'lanegrid__agtrace__claude_agent.jsonl');
const COMPACTED = join(FIXTURES, 'claude-code', 'codemie-ai__codemie-code__session-624a4a58.jsonl');
const OLD = join(FIXTURES, 'claude-code', 'd-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');
const SESSION = '7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9';
const SECRET = 'sk-ant-api03-' + 'Q'.repeat(40);
const missing = [!chromiumPath && `chromium (${CHROMIUM_CANDIDATES.join(' or ')})`, found.bin === null && `the claude binary (${found.why})`, !existsSync(MAIN) && `the fixture ${MAIN}`, !existsSync(AGENT) && `the fixture ${AGENT}`, !existsSync(OLD) && `the fixture ${OLD}`, !existsSync(COMPACTED) && `the fixture ${COMPACTED}`].filter(Boolean);
if (missing.length) console.error(`\n*** test/agents/claude-share.test.ts SKIPPED: missing ${missing.join(', ')} ***\n`);

describe('sharing a Claude Code session', () => {
  it('has what it needs (required when CI=true)', () => {
    if (process.env.CI === 'true') expect(missing).toEqual([]);
  });

  describe.skipIf(missing.length > 0)('share -> viewer in Chromium -> import -> claude --resume', () => {
    const rig = useServer(undefined, 'sessync-ccshare-');
    let api: FakeAnthropic;
    const chrome = useViewerBrowser();
    beforeAll(async () => {
      api = await startFakeAnthropic();
    });
    afterAll(async () => {
      await api?.close();
    });

    it('the branch is redacted, renders in the viewer, and imports as a session claude resumes', async () => {
      const a = new ClaudeMachine(rig.root, 'sharer', { remote: 'git@github.com:Acme/Shared.git' });
      await a.login(rig.server);
      const cwd = realpathSync(a.project);
      // The real session, with a key pasted into its last user message.
      const text = readFileSync(MAIN, 'utf8').replaceAll('/Users/test_user/agent-sample', cwd).replace('cd to myapp and run python hoge.py', `cd to myapp and run python hoge.py with ANTHROPIC_API_KEY ${SECRET}`);
      a.write(`${SESSION}.jsonl`, text);
      a.write(`${SESSION}/subagents/agent-a1b2.jsonl`, readFileSync(AGENT, 'utf8')); // a subagent's 2 lines (Warmup)
      const shared = await a.run(['share', SESSION.slice(0, 8), '--json']);
      expect(shared.code, shared.stderr).toBe(0);
      const { url, entryCount, redacted } = shared.json() as { url: string; entryCount: number; redacted: Record<string, number> };
      expect(redacted.anthropic_key).toBeGreaterThanOrEqual(1);
      expect(entryCount).toBeGreaterThan(5);

      const page = await chrome.browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(url);
      await page.waitForSelector('body[data-rendered]', { timeout: 30_000 });
      const log = await page.locator('#log').innerText();
      expect(log).toContain('add myapp directory and create myapp/hoge.py');
      expect(log).toContain("I've created the `myapp` directory");
      expect(log).toContain('[REDACTED:anthropic_key]');
      expect(log).not.toContain(SECRET);
      expect(await page.locator('details.thinking').count()).toBeGreaterThan(0);
      expect(await page.locator('details.tool', { hasText: 'Bash' }).count()).toBeGreaterThan(0);
      expect(await page.locator('details', { hasText: 'subagent: Warmup' }).count()).toBe(1); // collapsed
      expect(await page.locator('details[open]').count()).toBe(0);
      expect(errors).toEqual([]);
      await page.close();

      // Anyone with the link, on another machine and path: a new Claude Code session there.
      const b = new ClaudeMachine(rig.root, 'importer');
      const imported = await b.ok(['import', url, '--json']);
      expect(imported.path).toBe(join(b.folder, `${imported.id}.jsonl`));
      const got = readFileSync(imported.path, 'utf8');
      expect(got).not.toContain(SECRET);
      expect(got.split('\n').filter(Boolean)).toHaveLength(entryCount - 2);
      expect(imported.entryCount).toBe(entryCount - 2);
      const sub = readFileSync(join(b.folder, imported.id, 'subagents', 'agent-a1b2.jsonl'), 'utf8').split('\n').filter(Boolean);
      expect(sub).toHaveLength(2); // redacted like the rest (its home path is gone)
      expect(JSON.parse(sub[0]!).message.content).toBe('Warmup');
      expect(sub.join('\n')).not.toContain('/Users/test_user');

      api.replies.push('answer after the import');
      await claude(found.bin!, { cwd: b.project, home: join(b.home, '..', 'user-home'), configDir: b.claudeDir, api: api.url }, ['-p', '--resume', imported.id, 'continue from the share']);
      const seen = conversationTexts(api.requests[api.requests.length - 1]!, /^(?:cd to myapp and run python hoge\.py with ANTHROPIC_API_KEY .*|continue from the share|Done! I've created .*)$/s);
      expect(seen[0]).toMatch(/^assistant: Done! I've created the `myapp` directory/);
      expect(seen).toContain('user: cd to myapp and run python hoge.py with ANTHROPIC_API_KEY [REDACTED:anthropic_key]');
      expect(seen.at(-1)).toBe('user: continue from the share');

      // --at: the conversation up to that line only, nothing after it.
      const early = await a.ok(['share', SESSION, '--at', 'e9885817', '--json']);
      expect(early.entryCount).toBeLessThan(entryCount);
      const partial = await b.ok(['import', early.url, '--json']);
      const lines = readFileSync(partial.path, 'utf8').split('\n').filter(Boolean);
      expect(lines).toHaveLength(early.entryCount - 2);
      expect(JSON.parse(lines.at(-1)!).uuid).toBe('e9885817-b4bc-434b-8d1b-0895282020d4');
      expect((await a.run(['share', SESSION, '--at', 'ffffffff'])).stderr).toContain('--at ffffffff matches 0 lines');
    });

    /** A machine holding the real session file `path` (named by its session id), and that session shared. */
    async function shareFixture(name: string, id: string, path: string): Promise<{ text: string; shared: { url: string; entryCount: number } }> {
      const a = new ClaudeMachine(rig.root, name, { remote: `git@github.com:Acme/${name}.git` });
      await a.login(rig.server);
      const text = readFileSync(path, 'utf8');
      a.write(`${id}.jsonl`, text);
      return { text, shared: await a.ok(['share', id, '--json']) };
    }

    it('a 1.0.x session shares its inline subagent lines up to the shared point, collapsed in the viewer', async () => {
      const { text, shared } = await shareFixture('sharer-old', 'fe5e1c67-53e7-4862-81ae-d0e013e3270b', OLD);
      const inline = text.split('\n').filter((l) => l.includes('"isSidechain":true')).length;
      expect(inline).toBeGreaterThan(100);
      const b = new ClaudeMachine(rig.root, 'importer-old');
      const imported = await b.ok(['import', shared.url, '--json']);
      const got = readFileSync(imported.path, 'utf8').split('\n').filter(Boolean);
      expect(got.filter((l) => l.includes('"isSidechain":true'))).toHaveLength(inline);
      expect(imported.entryCount).toBe(shared.entryCount);
      const page = await chrome.browser.newPage();
      await page.goto(shared.url);
      await page.waitForSelector('body[data-rendered]', { timeout: 30_000 });
      expect(await page.locator('details', { hasText: 'subagent: Create React components for the TODO app' }).count()).toBeGreaterThan(0);
      expect(await page.locator('details[open]').count()).toBe(0);
      await page.close();
    });

    it('a compacted session shares the whole conversation: the history before, the compaction, its summary', async () => {
      const { text, shared } = await shareFixture('sharer-compacted', '624a4a58-b34c-462d-a70d-13421c8125a8', COMPACTED);
      const page = await chrome.browser.newPage();
      await page.goto(shared.url);
      await page.waitForSelector('body[data-rendered]', { timeout: 60_000 });
      expect(await page.locator('p.note', { hasText: 'conversation compacted' }).count()).toBe(1);
      expect(await page.locator('details.summary').count()).toBeGreaterThan(0);
      // Lines from before the compaction are in the share too (the boundary continues what it compacted).
      const boundary = text.split('\n').findIndex((l) => l.includes('"compact_boundary"'));
      expect(shared.entryCount).toBeGreaterThan(boundary / 2);
      await page.close();
    });
  });
});
