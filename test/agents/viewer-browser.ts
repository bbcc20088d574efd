// Headless Chromium for the share tests: Debian's chromium with a fresh profile, never a downloaded browser.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

export const CHROMIUM_CANDIDATES = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'];
export const chromiumPath = CHROMIUM_CANDIDATES.find((p) => existsSync(p));

/** A browser with a profile of its own (nothing carried over from another run); close() removes the profile too. */
export async function launchViewerBrowser(): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
  if (!chromiumPath) throw new Error(`no chromium at ${CHROMIUM_CANDIDATES.join(' or ')}`);
  const profile = mkdtempSync(join(tmpdir(), 'sessync-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A browser for the tests of one describe block: launched before them, closed after. */
export function useViewerBrowser(): { readonly browser: BrowserContext } {
  let chrome: Awaited<ReturnType<typeof launchViewerBrowser>> | undefined;
  beforeAll(async () => {
    chrome = await launchViewerBrowser();
  }, 120_000);
  afterAll(async () => {
    await chrome?.close();
  });
  return {
    get browser(): BrowserContext {
      if (!chrome) throw new Error('the browser is not launched yet (use it inside a test)');
      return chrome.browser;
    },
  };
}
