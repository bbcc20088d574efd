// Finds and replaces secrets (provider keys, tokens, private keys, auth headers, given values, the home path) in any JSON value.
import { setOwn } from './own-keys.js';

export type RedactionKind =
  | 'private_key'
  | 'env_file_value'
  | 'env_var_value'
  | 'anthropic_key'
  | 'openai_key'
  | 'aws_access_key'
  | 'aws_secret_key'
  | 'github_token'
  | 'slack_token'
  | 'google_api_key'
  | 'stripe_key'
  | 'jwt'
  | 'auth_header'
  | 'url_credentials'
  | 'secret_assignment'
  | 'home_path';

export type RedactionCounts = Partial<Record<RedactionKind, number>>;

/** A value known to be secret: from the project's .env, or a secret-looking environment variable. */
export interface KnownSecret {
  name: string;
  value: string;
  kind: 'env_file_value' | 'env_var_value';
}

export interface RedactOptions {
  secrets?: KnownSecret[];
  /** This machine's home: replaced by `~` wherever it is a whole path prefix. Ignored when shorter than 3 characters (e.g. `/`). */
  homeDir?: string;
  /** Other homes to replace the same way (another machine's, where a pulled session was written). */
  homeDirs?: string[];
}

export interface RedactResult<T> {
  value: T;
  counts: RedactionCounts;
}

export const marker = (kind: RedactionKind): string => `[REDACTED:${kind}]`;
const MARKER_START = '[REDACTED:';

interface Rule {
  kind: RedactionKind;
  re: RegExp;
  /** Index of the capture group holding the secret; 0 = the whole match. Text before it in the match is kept. */
  group: number;
}

// Every repetition before the secret is bounded or anchored at a word start: an unbounded one backtracks
// quadratically over long words (base64, minified code) and a 10 MB session would take minutes.
// Order matters: the most specific first (sk-ant- before sk-, a private key block before anything inside it).
// `(?<![\w-])` instead of \b so a key glued to a dash or underscore word is still found whole.
const RULES: Rule[] = [
  {
    kind: 'private_key',
    // A block with its END line, or a BEGIN line with no END in the same string (truncated output): everything after it.
    re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----(?:[\s\S]*?-----END \1PRIVATE KEY\2-----|[\s\S]*$)/g,
    group: 0,
  },
  { kind: 'anthropic_key', re: /(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}/g, group: 0 },
  { kind: 'openai_key', re: /(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, group: 0 },
  { kind: 'aws_access_key', re: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])/g, group: 0 },
  {
    kind: 'aws_secret_key',
    // Exactly 40 characters after the name, whatever follows: `/` and `+` are in the key's alphabet, so a boundary cannot be told apart.
    re: /(aws_?secret_?(?:access_?)?key(?:_id)?["']?\s*[:=]\s*["']?)([A-Za-z0-9/+]{40})/gi,
    group: 2,
  },
  { kind: 'github_token', re: /(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/g, group: 0 },
  { kind: 'slack_token', re: /(?<![\w-])xox[abposre]-[A-Za-z0-9-]{10,}/g, group: 0 },
  { kind: 'google_api_key', re: /(?<![\w-])AIza[0-9A-Za-z_-]{35}/g, group: 0 },
  { kind: 'stripe_key', re: /(?<![\w-])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}/g, group: 0 },
  { kind: 'jwt', re: /(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, group: 0 },
  // "Authorization: Bearer x", "authorization": "Basic x", Proxy-Authorization too.
  { kind: 'auth_header', re: /(authorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token|Digest)\s+)([^\s"',;]{4,})/gi, group: 2 },
  // A bare "Bearer <token>" (header objects keep the name as a key): long and with a digit, so prose does not match.
  { kind: 'auth_header', re: /((?<![\w-])(?:Bearer|Basic)\s+)((?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)/g, group: 2 },
  // scheme://user:password@host
  { kind: 'url_credentials', re: /((?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@"'<>]{1,256}:)([^\s@/"'<>]{3,256})(@)/gi, group: 2 },
  // Shell or .env style NAME=value where NAME looks secret; no spaces around =, so code like `const API_KEY = x` is left alone.
  {
    kind: 'secret_assignment',
    re: /((?<![A-Za-z0-9_])[A-Za-z0-9_]{0,64}(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Za-z0-9_]{0,64}=["']?)([^\s"'`$[]{8,})/g,
    group: 2,
  },
];

/** Values of NAME=value that are documentation, not secrets: `sk-ant-...`, `<your key>`, `your_token_here`, `xxxxxxxx`. */
const PLACEHOLDER = /\.\.\.|…|^<|^your[-_]|^x{4,}|^\*+$|^(changeme|example|placeholder)/i;

function bump(counts: RedactionCounts, kind: RedactionKind, n = 1): void {
  counts[kind] = (counts[kind] ?? 0) + n;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The per-call plan: known secrets longest first (a value that contains another is replaced whole), then the home paths. */
interface Plan {
  secrets: KnownSecret[];
  homes: RegExp[];
}

// Any user's home in the usual layouts, not only this machine's: a session pulled from another machine keeps
// `/Users/<name>/...` or `/home/<name>/...`. Not preceded by a path or word character, so `/mnt/home/x` and
// `example.com/Users/x` stay; a name may hold dots but not end with one (`/home/ann.` keeps its period).
const HOME_NAME = String.raw`[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_-])?(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])`;
const GENERIC_HOME = new RegExp(
  String.raw`(?<![A-Za-z0-9_.~-])(?:(?:/(?:var|usr|export))?/home/|/Users/(?!Shared(?![A-Za-z0-9_.-]))|(?<![A-Za-z0-9_])[A-Za-z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/))${HOME_NAME}`,
  'g',
);

/**
 * The home folder a path lies in, for the usual layouts (`/home/<name>`, `/var/home/<name>`, `/Users/<name>`,
 * `/root`, `C:\Users\<name>`), or null: a session header's cwd names the home of the machine that wrote it.
 */
export function homeOfPath(path: string): string | null {
  const m = /^(?:(?:\/(?:var|usr|export))?\/home\/[^/\\]+|\/Users\/[^/\\]+|\/root|[A-Za-z]:[/\\]Users[/\\][^/\\]+)(?=$|[/\\])/.exec(path);
  return m ? m[0] : null;
}

/** The cwd of a session header that is the value itself or its `header` (a share payload): its home is redacted too. */
function headerCwd(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return null;
  const o = value as Record<string, unknown>;
  const h = o.type === 'session' ? o : (o.header as Record<string, unknown> | undefined);
  return h && typeof h === 'object' && h.type === 'session' && typeof h.cwd === 'string' ? h.cwd : null;
}

const MARKERS_TEXT = ['~', ...RULES.map((r) => marker(r.kind)), marker('env_file_value'), marker('env_var_value'), marker('home_path')].join(' ');

function makePlan(opts: RedactOptions, value: unknown): Plan {
  const seen = new Set<string>();
  const secrets = (opts.secrets ?? [])
    // A value that is part of our own markers would be found again forever by the re-scan.
    .filter((s) => s.value.length > 0 && !MARKERS_TEXT.includes(s.value))
    .filter((s) => (seen.has(s.value) ? false : (seen.add(s.value), true)))
    .sort((a, b) => b.value.length - a.value.length);
  const cwd = headerCwd(value);
  const fromHeader = cwd === null ? null : homeOfPath(cwd);
  const dirs = [opts.homeDir, ...(opts.homeDirs ?? []), fromHeader]
    .map((d) => d?.replace(/[\\/]+$/, ''))
    .filter((d): d is string => d !== undefined && d.length >= 3);
  // Longest first, so a home inside another one's path is not cut short; each as a whole path prefix: not /home/ann inside
  // /home/anna, nor inside a longer path or a closing tag (`/srv/root`, `</root>` when the home is /root).
  const homes = [...new Set(dirs)].sort((a, b) => b.length - a.length).map((d) => new RegExp(`(?<![A-Za-z0-9_.~<-])${escapeRe(d)}(?![A-Za-z0-9_.-])`, 'g'));
  homes.push(GENERIC_HOME);
  return { secrets, homes };
}

function redactText(text: string, plan: Plan, counts: RedactionCounts, replace: boolean): string {
  let out = text;
  for (const s of plan.secrets) {
    if (!out.includes(s.value)) continue;
    const parts = out.split(s.value);
    bump(counts, s.kind, parts.length - 1);
    if (replace) out = parts.join(marker(s.kind));
  }
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    if (!rule.re.test(out)) continue;
    rule.re.lastIndex = 0;
    const next = out.replace(rule.re, (...m: unknown[]) => {
      const whole = m[0] as string;
      const secret = m[rule.group] as string;
      if (secret.startsWith(MARKER_START)) return whole;
      if (rule.kind === 'secret_assignment' && PLACEHOLDER.test(secret)) return whole;
      bump(counts, rule.kind);
      if (rule.group === 0) return marker(rule.kind);
      const at = whole.indexOf(secret, ((m[1] as string | undefined) ?? '').length);
      return whole.slice(0, at) + marker(rule.kind) + whole.slice(at + secret.length);
    });
    if (replace) out = next;
  }
  for (const home of plan.homes) {
    home.lastIndex = 0;
    if (!home.test(out)) continue;
    home.lastIndex = 0;
    const next = out.replace(home, () => (bump(counts, 'home_path'), '~'));
    if (replace) out = next;
  }
  return out;
}

/** A container still being copied: its source, its copy (null when only scanning) and the next index or key. */
interface WalkFrame {
  src: unknown[] | Record<string, unknown>;
  dst: unknown[] | Record<string, unknown> | null;
  keys: string[] | null;
  next: number;
  isImage: boolean;
}

/**
 * Redacts every string at any depth. Iterative (an explicit stack): entry content can be nested far deeper
 * than the call stack, and a share or a scan must not die on it. A copy is built only when `replace`.
 */
function walk(v: unknown, plan: Plan, counts: RedactionCounts, replace: boolean): unknown {
  const stack: WalkFrame[] = [];
  /** The copy of a value: a string redacted, a container opened on the stack (filled in by the loop). */
  const visit = (x: unknown): unknown => {
    if (typeof x === 'string') return redactText(x, plan, counts, replace);
    if (x === null || typeof x !== 'object') return x;
    if (Array.isArray(x)) {
      const dst = replace ? new Array<unknown>(x.length) : null;
      stack.push({ src: x, dst, keys: null, next: 0, isImage: false });
      return dst;
    }
    const o = x as Record<string, unknown>;
    const dst = replace ? {} : null;
    // Base64 image data: a random match inside it would corrupt the image and cannot be a readable secret.
    stack.push({ src: o, dst, keys: Object.keys(o), next: 0, isImage: o.type === 'image' });
    return dst;
  };
  const root = visit(v);
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.keys === null) {
      const src = f.src as unknown[];
      if (f.next >= src.length) {
        stack.pop();
        continue;
      }
      const i = f.next++;
      const copy = visit(src[i]);
      if (f.dst) (f.dst as unknown[])[i] = copy;
      continue;
    }
    if (f.next >= f.keys.length) {
      stack.pop();
      continue;
    }
    const k = f.keys[f.next++]!;
    const x = (f.src as Record<string, unknown>)[k];
    if (f.isImage && k === 'data' && typeof x === 'string') {
      if (f.dst) setOwn(f.dst as Record<string, unknown>, k, x);
      continue;
    }
    // Keys are scanned (the re-scan blocks a share with a secret in a key) but never rewritten: they are structure.
    redactText(k, plan, counts, false);
    const copy = visit(x);
    if (f.dst) setOwn(f.dst as Record<string, unknown>, k, copy);
  }
  return replace ? root : v;
}

/**
 * Returns a redacted copy of `value` (every string, at any depth) and how many secrets of each kind were replaced.
 * Home paths: `homeDir`, `homeDirs`, the home of the cwd of a session header that is `value` or `value.header`,
 * and any `/home/<name>` or `/Users/<name>` prefix all become `~`.
 */
export function redactValue<T>(value: T, opts: RedactOptions = {}): RedactResult<T> {
  const counts: RedactionCounts = {};
  const out = walk(value, makePlan(opts, value), counts, true) as T;
  return { value: out, counts };
}

/** Counts what redactValue would replace, without copying: the final re-scan before a share leaves the machine. */
export function scanValue(value: unknown, opts: RedactOptions = {}): RedactionCounts {
  const counts: RedactionCounts = {};
  walk(value, makePlan(opts, value), counts, false);
  return counts;
}

export function totalOf(counts: RedactionCounts): number {
  let n = 0;
  for (const v of Object.values(counts)) n += v ?? 0;
  return n;
}

/** "3 aws_access_key, 1 private_key" (or "nothing"), sorted by kind for stable output. */
export function describeCounts(counts: RedactionCounts): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => (n ?? 0) > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${n} ${k}`);
  return parts.length ? parts.join(', ') : 'nothing';
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD/i;
const MIN_ENV_VALUE = 8;

/** Secret-looking environment variables: the name matches KEY|TOKEN|SECRET|PASSWORD and the value has at least 8 characters. */
export function secretsFromEnv(env: Record<string, string | undefined>): KnownSecret[] {
  const out: KnownSecret[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && SECRET_NAME.test(name) && value.length >= MIN_ENV_VALUE) out.push({ name, value, kind: 'env_var_value' });
  }
  return out;
}

/**
 * Values of a .env file. Every value of 8+ characters counts, and shorter ones (4+) when the name
 * looks secret; tiny values like "true" or "3000" would wreck the session text and protect nothing.
 */
export function secretsFromDotenv(text: string): KnownSecret[] {
  const out: KnownSecret[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(raw);
    if (!m) continue;
    const name = m[1]!;
    let value = m[2]!.trim();
    const q = value[0];
    if ((q === '"' || q === "'") && value.length >= 2 && value.endsWith(q)) value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    if (value.length >= MIN_ENV_VALUE || (SECRET_NAME.test(name) && value.length >= 4)) out.push({ name, value, kind: 'env_file_value' });
  }
  return out;
}
