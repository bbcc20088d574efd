// A share of a session synced end-to-end encrypted still opens in headless Chromium and imports: the share has its own key.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext } from 'playwright-core';
import { branchySession, startHarness, storedFiles, type Harness } from '../share/share-harness.js';

const CANDIDATES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'];
const executablePath = CANDIDATES.find((p) => existsSync(p));
const CI = process.env.CI === 'true';
if (!executablePath && !CI) console.warn('\n*** SKIPPED test/crypto/share-encrypted.test.ts: no chromium (apt-get install -y chromium). ***\n');

describe.skipIf(!executablePath && !CI)('a share of an encrypted session', () => {
  let h: Harness;
  let browser: BrowserContext;
  let profile: string;

  beforeAll(async () => {
    if (!executablePath) throw new Error('CI=true but chromium is missing: install the chromium package');
    h = await startHarness({ encrypt: true });
    profile = mkdtempSync(join(tmpdir(), 'sessync-chromium-e2e-'));
    browser = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('is pushed sealed, then shared: the link opens in Chromium and `sessync import` takes it', async () => {
    const status = await h.cli(['key', 'status', '--json']);
    expect(status.json()).toMatchObject({ encrypted: true, matches: true });
    const s = branchySession(h.project, '019a0000-0000-7000-8000-0000000e2e01');
    h.writeSession(s.header, s.entries);
    const push = await h.cli(['push', '--json']);
    expect(push.code, push.stderr).toBe(0);
    expect(push.json()).toMatchObject({ pushedEntries: 7, failed: 0 });
    // Synced sealed: the session's text is nowhere in the store.
    expect(storedFiles(h.dataDir).filter((f) => f.text.includes('List the files, please.'))).toEqual([]);

    const share = await h.cli(['share', s.header.id, '--at', 'e4-d', '--json']);
    expect(share.code, share.stderr).toBe(0);
    const url = share.json().url as string;
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector('body[data-rendered]', { timeout: 30_000 });
    const text = await page.locator('#log').innerText();
    expect(text).toContain('List the files, please.');
    expect(text).toContain('Three entries: README.md, package.json, src.');
    expect(text).not.toContain('say hi');
    await page.close();

    const imported = await h.cli(['import', url, '--json']);
    expect(imported.code, imported.stderr).toBe(0);
    const log = await h.cli(['log', imported.json().id, '--json']);
    expect(JSON.stringify(log.json())).toContain('Three entries: README.md, package.json, src.');
  }, 120_000);
});
