// The viewer's static page, its style and the security headers they are served with.

/** No inline script or style anywhere: the CSP below allows only same-origin files, and no third party at all. */
export const VIEWER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function viewerHeaders(contentType: string): Record<string, string> {
  return {
    'Content-Type': contentType,
    'Content-Security-Policy': VIEWER_CSP,
    'X-Robots-Tag': 'noindex, nofollow',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
  };
}

// Asset paths are relative to /s/<token>, so the page also works when the service sits under a path prefix.
export const VIEWER_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>Shared session · sessync</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/viewer.css">
<script src="assets/viewer.js" defer></script>
</head>
<body>
<header class="top">
  <h1>Shared session</h1>
  <p id="meta" class="meta"></p>
</header>
<p id="status" class="status" role="status">Loading and decrypting…</p>
<main id="log" class="log"></main>
<noscript><p class="status error">This page decrypts the session in your browser and needs JavaScript.</p></noscript>
<footer class="foot">Decrypted in this browser: the server stores only ciphertext and never sees the key after #.</footer>
</body>
</html>
`;

export const VIEWER_CSS = `:root { color-scheme: light dark; --fg: #1d1f23; --muted: #6b7280; --bg: #ffffff; --card: #f5f6f8; --user: #e8f0fe; --line: #d9dce1; --err: #b42318; --accent: #3b5bdb; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --muted: #9aa0a6; --bg: #16181c; --card: #1f2228; --user: #1e2a44; --line: #33373e; --err: #f97066; --accent: #91a7ff; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 58rem; padding: 1rem 1.25rem 3rem; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.3rem; margin: 0.2rem 0; }
.meta, .foot { color: var(--muted); font-size: 0.85rem; }
.foot { margin-top: 2rem; border-top: 1px solid var(--line); padding-top: 0.5rem; }
.status { padding: 0.6rem 0.8rem; border-radius: 6px; background: var(--card); }
.status.error { color: var(--err); border: 1px solid var(--err); font-weight: 600; }
.status:empty { display: none; }
.entry { margin: 0.6rem 0; padding: 0.55rem 0.8rem; border-radius: 8px; background: var(--card); border: 1px solid var(--line); }
.entry.user { background: var(--user); }
.role { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted); margin-bottom: 0.2rem; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.note { font-size: 0.85rem; color: var(--muted); font-style: italic; margin: 0.35rem 0; }
details { margin: 0.35rem 0; border: 1px solid var(--line); border-radius: 6px; padding: 0.2rem 0.6rem; background: var(--bg); }
details > summary { cursor: pointer; color: var(--accent); font-size: 0.9rem; overflow-wrap: anywhere; }
details.error > summary { color: var(--err); }
pre { margin: 0.4rem 0; padding: 0.5rem; overflow-x: auto; max-height: 40rem; font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; overflow-wrap: anywhere; background: var(--card); border-radius: 4px; }
img.shot { max-width: 100%; border: 1px solid var(--line); border-radius: 4px; }
button.more { margin: 0.3rem 0; }
`;
