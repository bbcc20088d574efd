// The viewer page: static for every token, strict CSP, noindex, no inline script or style, and a fresh committed bundle.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app.js';
import { MemoryStore } from '../../worker/store/memory-store.js';
import { VIEWER_SCRIPT } from '../../worker/viewer/viewer-bundle.js';
import { TEST_ADMIN_SECRET } from './routes-helpers.js';
// @ts-expect-error: a plain .mjs build script without type declarations
import { BUNDLE_PATH, buildViewerModule } from '../../worker/viewer/build-viewer.mjs';

const app = createApp({ store: new MemoryStore(), adminSecret: TEST_ADMIN_SECRET });
const get = (path: string) => app.request(`http://sessync.test${path}`);

describe('GET /s/:token', () => {
  it('serves the same static page for any token (404 for unknown ones), with strict security headers', async () => {
    const a = await get('/s/' + 'A'.repeat(43));
    const b = await get('/s/anything-at-all');
    expect([a.status, b.status]).toEqual([404, 404]);
    const html = await a.text();
    expect(await b.text()).toBe(html);
    expect(a.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = a.headers.get('content-security-policy') ?? '';
    for (const d of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:", "frame-ancestors 'none'"]) expect(csp).toContain(d);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(a.headers.get('x-robots-tag')).toMatch(/noindex/);
    expect(a.headers.get('referrer-policy')).toBe('no-referrer');
    expect(a.headers.get('cache-control')).toBe('no-store');
    expect(html).toContain('<meta name="robots" content="noindex, nofollow">');
  });

  it('has no inline script, no inline style, and no third-party resource', async () => {
    const html = await (await get('/s/x')).text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toContain('src="assets/viewer.js"');
    expect(scripts[0]![2]).toBe('');
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('serves the script and style with their types and the same CSP', async () => {
    const js = await get('/s/assets/viewer.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^application\/javascript/);
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await js.text()).toBe(VIEWER_SCRIPT);
    const css = await get('/s/assets/viewer.css');
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('the script never writes session data as HTML', () => {
    expect(VIEWER_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });

  it('the committed bundle matches worker/viewer/src (run node worker/viewer/build-viewer.mjs after editing it)', async () => {
    expect(readFileSync(BUNDLE_PATH, 'utf8')).toBe(await buildViewerModule());
  });
});
