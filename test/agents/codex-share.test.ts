// Share of a Codex session: redacted and encrypted here, read in headless Chromium (messages shown, tool calls and
// reasoning collapsed, no secret), imported on another machine as a new rollout the real `codex exec resume` continues.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../sync/helpers.js';
import { findCodex } from './codex-cli.js';
import { ShareMachine } from './codex-share-rig.js';
import { responsesConversation, startFakeResponses, type FakeResponses } from './fake-openai-responses.js';
import { FIXTURES } from './fixture-samples.js';
import { CHROMIUM_CANDIDATES, chromiumPath, useViewerBrowser } from './viewer-browser.js';

const found = await findCodex();
const FIXTURE = join(FIXTURES, 'codex', 'lanegrid__agtrace__codex_session.jsonl');
const FIXTURE_ID = '019b04ae-b1c6-7c72-a134-a4c2de66058c';
const FIXTURE_REL = `2025/12/09/rollout-2025-12-09T19-55-16-${FIXTURE_ID}.jsonl`;
const SECRET = 'sk-proj-' + 'Q7'.repeat(20);
const missing = [!chromiumPath && `chromium (${CHROMIUM_CANDIDATES.join(' or ')})`, found.bin === null && `the codex binary (${found.why})`, !existsSync(FIXTURE) && `the fixture ${FIXTURE}`].filter(Boolean);
if (missing.length) console.error(`\n*** test/agents/codex-share.test.ts SKIPPED: missing ${missing.join(', ')} ***\n`);

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

describe('sharing a Codex session', () => {
  it('has what it needs (required when CI=true)', () => {
    if (process.env.CI === 'true') expect(missing).toEqual([]);
  });

  describe.skipIf(missing.length > 0)('share -> viewer in Chromium -> import -> codex exec resume', () => {
    const rig = useServer(undefined, 'sessync-cxshare-');
    let api: FakeResponses;
    const chrome = useViewerBrowser();
    beforeAll(async () => {
      api = await startFakeResponses();
    });
    afterAll(async () => {
      await api?.close();
    });

    async function viewerText(url: string): Promise<{ log: string; closed: number; open: number; errors: string[]; tools: number; thinking: string[] }> {
      const page = await chrome.browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(url);
      await page.waitForSelector('body[data-rendered]', { timeout: 30_000 });
      const log = await page.locator('#log').innerText();
      const out = {
        log,
        closed: await page.locator('details').count(),
        open: await page.locator('details[open]').count(),
        tools: await page.locator('details.tool').count(),
        thinking: await page.locator('details.thinking > summary').allInnerTexts(),
        errors,
      };
      await page.close();
      return out;
    }

    it('a session the real codex wrote: redacted, rendered, imported, and resumed with its messages', async () => {
      const a = new ShareMachine(rig.root, 'sharer');
      a.configure(api.url);
      await a.login(rig.server);
      api.replies.push('the first answer');
      const id = await a.codexSession(found.bin!, `remember the key ${SECRET}`);
      const [rel] = a.rollouts();
      const original = lines(readFileSync(join(a.codexHome, 'sessions', rel!), 'utf8'));

      const shared = await a.run(['share', id.slice(0, 13), '--json']);
      expect(shared.code, shared.stderr).toBe(0);
      const { url, entryCount, redacted } = shared.json() as { url: string; entryCount: number; redacted: Record<string, number> };
      expect(redacted.openai_key).toBeGreaterThanOrEqual(1);
      expect(entryCount).toBe(original.length);

      const v = await viewerText(url);
      expect(v.log).toContain('remember the key [REDACTED:openai_key]');
      expect(v.log).toContain('the first answer');
      expect(v.log).not.toContain(SECRET);
      expect(v.open).toBe(0); // Codex's own instructions and context: there, closed
      expect(v.closed).toBeGreaterThan(0);
      expect(v.errors).toEqual([]);

      // Anyone with the link, on another machine and path: a new rollout there, in Codex's date folder.
      const b = new ShareMachine(rig.root, 'importer');
      b.configure(api.url);
      const imported = await b.ok(['import', url, '--json']);
      expect(imported.agent).toBe('codex');
      expect(imported.id).not.toBe(id);
      expect(b.rollouts()).toHaveLength(1);
      expect(b.rollouts()[0]).toMatch(new RegExp(`^\\d{4}/\\d{2}/\\d{2}/rollout-\\d{4}-\\d{2}-\\d{2}T\\d{2}-\\d{2}-\\d{2}-${imported.id}\\.jsonl$`));
      expect(imported.path).toBe(join(b.codexHome, 'sessions', b.rollouts()[0]!));
      const got = lines(readFileSync(imported.path, 'utf8'));
      expect(got).toHaveLength(original.length);
      const meta = JSON.parse(got[0]!) as { type: string; payload: Record<string, unknown> };
      expect(meta.type).toBe('session_meta');
      expect(meta.payload.id).toBe(imported.id);
      expect(meta.payload.cwd).toBe(realpathSync(b.project));
      expect(readFileSync(imported.path, 'utf8')).not.toContain(SECRET);
      // Every line redaction did not touch lands byte for byte; only the lines that held the secret differ, and the
      // turn_context lines, whose cwd is this project's (as the session_meta's).
      for (let i = 1; i < got.length; i++) {
        let d = 0;
        while (d < got[i]!.length && got[i]![d] === original[i]![d]) d++;
        const turn = (JSON.parse(original[i]!) as { type: string }).type === 'turn_context';
        if (turn) expect((JSON.parse(got[i]!) as { payload: { cwd: string } }).payload.cwd).toBe(realpathSync(b.project));
        expect(got[i] === original[i], `line ${i + 1}: ${original[i]!.slice(d - 80, d + 80)} -> ${got[i]!.slice(d - 80, d + 80)}`).toBe(!original[i]!.includes(SECRET) && !turn);
      }

      api.replies.push('answer after the import');
      const before = api.requests.length;
      await b.resume(found.bin!, imported.id, 'continue from the share');
      expect(api.requests.length).toBe(before + 1);
      const seen = responsesConversation(api.requests[api.requests.length - 1]!, /[\s\S]/);
      expect(seen).toContain('user: remember the key [REDACTED:openai_key]');
      expect(seen).toContain('assistant: the first answer');
      expect(seen.at(-1)).toBe('user: continue from the share');
      // Codex appended its turn to the imported rollout itself.
      expect(lines(readFileSync(imported.path, 'utf8')).length).toBeGreaterThan(got.length);
    });

    it('a rollout with tool calls and encrypted reasoning: shown collapsed, secrets in arguments and outputs redacted, imported, resumed', async () => {
      const a = new ShareMachine(rig.root, 'fixture-sharer');
      await a.login(rig.server);
      const text = readFileSync(FIXTURE, 'utf8')
        .replace('{\\"command\\":\\"mkdir -p myapp\\"', `{\\"command\\":\\"mkdir -p myapp && echo ${SECRET}\\"`)
        .replace('Output:\\n/opt/homebrew', `Output:\\n${SECRET}\\n/opt/homebrew`);
      expect(text.split(SECRET)).toHaveLength(3); // one in a function_call's arguments, one in its output
      a.writeRollout(FIXTURE_REL, text);
      const { url, entryCount, redacted } = await a.ok(['share', FIXTURE_ID, '--json']);
      expect(redacted.openai_key).toBe(2);
      expect(entryCount).toBe(lines(text).length);

      const v = await viewerText(url);
      expect(v.log).toContain('add myapp directory and create myapp/hoge.py');
      expect(v.log).toContain('Added simple script in `myapp/hoge.py`');
      expect(v.log).not.toContain(SECRET);
      expect(v.log).not.toContain('gAAAA'); // encrypted reasoning is never shown
      expect(v.tools).toBeGreaterThanOrEqual(10); // 5 calls and their 5 results
      expect(v.thinking.length).toBe(6);
      expect(v.open).toBe(0);
      expect(v.errors).toEqual([]);

      const b = new ShareMachine(rig.root, 'fixture-importer');
      b.configure(api.url);
      const imported = await b.ok(['import', url, '--json']);
      const got = lines(readFileSync(imported.path, 'utf8'));
      const orig = lines(text);
      expect(got.slice(1).filter((l, i) => l === orig[i + 1]).length).toBe(orig.length - 1 - orig.slice(1).filter((l) => l.includes(SECRET) || l.includes('/Users/test_user')).length);
      expect(got.join('\n')).toContain('[REDACTED:openai_key]');

      api.replies.push('resumed the fixture');
      await b.resume(found.bin!, imported.id, 'what did you create?');
      const seen = responsesConversation(api.requests[api.requests.length - 1]!, /[\s\S]/);
      expect(seen).toContain('user: add myapp directory and create myapp/hoge.py which shows result of print(1+1).');
      expect(seen).toContain('assistant: Added simple script in `myapp/hoge.py` that prints the result of `1 + 1`.');
      expect(seen.at(-1)).toBe('user: what did you create?');
      const calls = (api.requests[api.requests.length - 1]!.input as { type: string; arguments?: string }[]).filter((i) => i.type === 'function_call');
      expect(calls.map((c) => c.arguments).join('\n')).toContain('[REDACTED:openai_key]');
    });

    it('--at a line shares lines 1..that line only; an unknown line is a clear error', async () => {
      const a = new ShareMachine(rig.root, 'at-sharer');
      await a.login(rig.server);
      a.writeRollout(FIXTURE_REL, readFileSync(FIXTURE, 'utf8'));
      const early = await a.ok(['share', FIXTURE_ID, '--at', '20', '--json']);
      expect(early.entryCount).toBe(20);
      const b = new ShareMachine(rig.root, 'at-importer');
      const imported = await b.ok(['import', early.url, '--json']);
      const got = lines(readFileSync(imported.path, 'utf8'));
      expect(got).toHaveLength(20);
      // Line 20 is the last one shared (its home path redacted, the rest as it was), a turn_context: its cwd is the
      // importing project's, as the session_meta's is.
      const last = JSON.parse(lines(readFileSync(FIXTURE, 'utf8'))[19]!.replaceAll('/Users/test_user', '~')) as { type: string; payload: object };
      expect(last.type).toBe('turn_context');
      expect(got[19]).toBe(JSON.stringify({ ...last, payload: { ...last.payload, cwd: realpathSync(b.project) } }));
      const bad = await a.run(['share', FIXTURE_ID, '--at', '9999']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('--at 9999: line 9999 of the rollout is not a usable line');
    });

    it('a rollout with non-JSON lines and a torn last line: both reported, the rest shared and imported', async () => {
      const a = new ShareMachine(rig.root, 'torn-sharer');
      await a.login(rig.server);
      const good = lines(readFileSync(FIXTURE, 'utf8'));
      const text = [...good.slice(0, 10), 'not json at all', '{"broken":', ...good.slice(10)].join('\n') + '\n{"timestamp":"2025-12-09T19:56:00.000Z","type":"response_item","payl';
      a.writeRollout(FIXTURE_REL, text);
      const r = await a.run(['share', FIXTURE_ID, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const shared = r.json() as { url: string; entryCount: number; notes: string[] };
      expect(shared.notes).toHaveLength(2);
      expect(shared.notes[0]).toMatch(/^2 line\(s\) of .* are not JSON and are not part of the share \(line 11, 12\)$/);
      expect(shared.notes[1]).toContain('has no newline yet');
      // Said in words without --json.
      const human = await a.run(['share', FIXTURE_ID]);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stderr).toContain('note: 2 line(s) of');
      expect(human.stderr).toContain('has no newline yet (Codex may be writing it): it is not part of the share');
      expect(shared.entryCount).toBe(good.length);
      const b = new ShareMachine(rig.root, 'torn-importer');
      const imported = await b.ok(['import', shared.url, '--json']);
      expect(lines(readFileSync(imported.path, 'utf8'))).toHaveLength(good.length);
    });

    it('an unknown session id is not found, with the ref in the message', async () => {
      const a = new ShareMachine(rig.root, 'nothing');
      await a.login(rig.server);
      const r = await a.run(['share', '0123abcd']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('no session matches "0123abcd"');
    });
  });
});
