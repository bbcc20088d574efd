// Redaction: each provider's key shape, private keys, auth headers, known values, the home path, the walk and the re-scan.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { describeCounts, homeOfPath, redactValue, scanValue, secretsFromDotenv, secretsFromEnv, totalOf, type RedactionKind } from '../../shared/redact.js';

// Built from parts so secret scanners do not flag this file; all are fake (AWS's documented example key and made-up strings).
const fake = {
  aws: 'AKIA' + 'IOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY' + 'EXAMPLEKEY',
  github: 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
  githubPat: 'github_pat_' + '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
  openai: 'sk-proj-' + 'Abc123Def456Ghi789Jkl012Mno345',
  anthropic: 'sk-ant-' + 'api03-Abc123Def456Ghi789Jkl012Mno345',
  slack: 'xoxb-' + '123456789012-abcdefghijkl',
  google: 'AIza' + 'SyA1234567890abcdefghijklmnopqrstuv',
  stripe: 'sk_live_' + '4eC39HqLyjWDarjtT1zdp7dc',
  jwt: 'eyJhbGciOiJIUzI1NiJ9' + '.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  pem: '-----BEGIN RSA ' + 'PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naFDrBz9vFqU4yDc3\n-----END RSA PRIVATE KEY-----',
};

function one(text: string, opts = {}): { text: string; kinds: RedactionKind[] } {
  const r = redactValue(text, opts);
  return { text: r.value, kinds: Object.keys(r.counts) as RedactionKind[] };
}

describe('redactValue finds each kind', () => {
  const cases: [string, string, RedactionKind][] = [
    ['AWS access key id', `export AWS_ACCESS_KEY_ID_X ${fake.aws} done`, 'aws_access_key'],
    ['AWS secret key', `aws_secret_access_key = ${fake.awsSecret}`, 'aws_secret_key'],
    ['GitHub classic token', `token: ${fake.github}`, 'github_token'],
    ['GitHub fine-grained token', `use ${fake.githubPat} here`, 'github_token'],
    ['OpenAI key', `OPENAI ${fake.openai}`, 'openai_key'],
    ['Anthropic key', `key ${fake.anthropic}.`, 'anthropic_key'],
    ['Slack token', `slack ${fake.slack}`, 'slack_token'],
    ['Google API key', `maps?key=${fake.google}&x=1`, 'google_api_key'],
    ['Stripe live key', `stripe ${fake.stripe}`, 'stripe_key'],
    ['JWT', `cookie=${fake.jwt};`, 'jwt'],
    ['private key block', `cat id_rsa\n${fake.pem}\nok`, 'private_key'],
    ['Authorization Bearer header', 'curl -H "Authorization: Bearer abc.def.ghi" https://x', 'auth_header'],
    ['Authorization Basic header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'auth_header'],
    ['URL credentials', 'postgres://admin:hunter2hunter@db.local:5432/app', 'url_credentials'],
    ['secret assignment', 'DB_PASSWORD=correcthorsebattery', 'secret_assignment'],
  ];
  for (const [name, text, kind] of cases) {
    it(name, () => {
      const r = one(text);
      expect(r.kinds).toContain(kind);
      expect(r.text).toContain(`[REDACTED:${kind}]`);
      // Nothing found a second time: the re-scan of the result is clean.
      expect(totalOf(scanValue(r.text))).toBe(0);
    });
  }

  it('removes the secret itself and keeps the text around it', () => {
    const r = one(`before ${fake.aws} after`);
    expect(r.text).toBe('before [REDACTED:aws_access_key] after');
    const h = one('Authorization: Bearer s3cr3t-t0ken-value');
    expect(h.text).toBe('Authorization: Bearer [REDACTED:auth_header]');
  });

  it('redacts a private key block whose END line was cut off', () => {
    const r = one(`head\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA`);
    expect(r.text).toBe('head\n[REDACTED:private_key]');
  });

  it('leaves documentation placeholders in NAME=value alone', () => {
    const text = 'export ANTHROPIC_API_KEY=sk-ant-... and OPENAI_API_KEY=<your key> and GH_TOKEN=your_token_here';
    expect(redactValue(text).value).toBe(text);
  });

  it('leaves ordinary prose and code alone', () => {
    const text = 'Basic authentication is fine. const API_KEY = process.env.API_KEY; see sk-learn docs; the task-ask is done.';
    const r = redactValue(text);
    expect(r.value).toBe(text);
    expect(totalOf(r.counts)).toBe(0);
  });
});

describe('known values and the home path', () => {
  it('replaces .env values and secret-looking environment variables', () => {
    const secrets = [
      ...secretsFromDotenv('# comment\nDATABASE_URL="postgres://localhost/db-name-x"\nDEBUG=true\nAPI_SECRET=abcd1\nexport MY_TOKEN=\'tok-123456789\'\n'),
      ...secretsFromEnv({ OPENAI_API_KEY: 'zzzzzzzzzzzz', HOME: '/home/ann', SHORT_TOKEN: 'abc', PATH: '/usr/bin:/bin' }),
    ];
    expect(secrets.map((s) => s.name).sort()).toEqual(['API_SECRET', 'DATABASE_URL', 'MY_TOKEN', 'OPENAI_API_KEY']);
    const r = redactValue('url postgres://localhost/db-name-x key zzzzzzzzzzzz tok tok-123456789 s abcd1 debug true', { secrets });
    expect(r.value).toBe('url [REDACTED:env_file_value] key [REDACTED:env_var_value] tok [REDACTED:env_file_value] s [REDACTED:env_file_value] debug true');
    expect(r.counts).toEqual({ env_file_value: 3, env_var_value: 1 });
  });

  it('replaces the home path with ~ only as a whole path prefix', () => {
    // A home outside the usual layouts, so only homeDir can find it.
    const r = redactValue('/srv/people/ann/src/app and /srv/people/ann and /srv/people/anna/x', { homeDir: '/srv/people/ann/' });
    expect(r.value).toBe('~/src/app and ~ and /srv/people/anna/x');
    expect(r.counts).toEqual({ home_path: 2 });
  });

  it('leaves a home that is only part of a longer path or a closing tag (a home of /root and `</root>`)', () => {
    const r = redactValue('<root>x</root> cd /root/app; ls /srv/root; cat file:///root/a', { homeDir: '/root' });
    expect(r.value).toBe('<root>x</root> cd ~/app; ls /srv/root; cat file://~/a');
    expect(r.counts).toEqual({ home_path: 2 });
  });

  it('replaces any user\'s /home/<name> and /Users/<name> (a session from another machine), not only this machine\'s', () => {
    const text = [
      'cat /Users/alice/code/app/src/main.ts',
      'ls /home/bob/.aws',
      'cd /var/home/hal/x',
      'open file:///Users/eve/a.txt',
      'dir C:\\Users\\carol\\proj',
      '"cwd":"C:\\\\Users\\\\dan\\\\proj"',
      'see /home/alice.',
    ].join('\n');
    const r = redactValue(text, { homeDir: '/home/ann' });
    expect(r.value).toBe(['cat ~/code/app/src/main.ts', 'ls ~/.aws', 'cd ~/x', 'open file://~/a.txt', 'dir ~\\proj', '"cwd":"~\\\\proj"', 'see ~.'].join('\n'));
    expect(r.counts).toEqual({ home_path: 7 });
    expect(totalOf(scanValue(r.value, { homeDir: '/home/ann' }))).toBe(0);
  });

  it('leaves paths that only contain a home-like part alone', () => {
    const text = '/mnt/home/dave/x https://github.com/Users/x example.com/home/y /Users/Shared/z ls /home/ ./home/w';
    const r = redactValue(text);
    expect(r.value).toBe(text);
    expect(r.counts).toEqual({});
  });

  it('also replaces the home of the session header\'s cwd, wherever its layout (the value or its .header)', () => {
    const payload = { header: { type: 'session', id: 's', timestamp: 't', cwd: '/root/work/app' }, entries: [{ text: 'cat /root/.bashrc; ls /rootkit' }] };
    const r = redactValue(payload);
    expect(r.value).toEqual({ header: { type: 'session', id: 's', timestamp: 't', cwd: '~/work/app' }, entries: [{ text: 'cat ~/.bashrc; ls /rootkit' }] });
    expect(r.counts).toEqual({ home_path: 2 });
    expect(redactValue({ type: 'session', cwd: '/root/app', note: '/root/x' }).value).toEqual({ type: 'session', cwd: '~/app', note: '~/x' });
    // homeDirs: homes given by the caller.
    expect(redactValue('/opt/u/zed/x', { homeDirs: ['/opt/u/zed'] }).value).toBe('~/x');
  });

  it('homeOfPath knows the usual layouts', () => {
    expect(homeOfPath('/Users/alice/code/app')).toBe('/Users/alice');
    expect(homeOfPath('/home/bob')).toBe('/home/bob');
    expect(homeOfPath('/var/home/hal/x')).toBe('/var/home/hal');
    expect(homeOfPath('/root/x')).toBe('/root');
    expect(homeOfPath('C:\\Users\\carol\\proj')).toBe('C:\\Users\\carol');
    expect(homeOfPath('/srv/app')).toBeNull();
    expect(homeOfPath('/rootkit/x')).toBeNull();
  });

  it('ignores a value that is part of its own marker, so the re-scan cannot block forever', () => {
    const secrets = [{ name: 'X_TOKEN', value: 'REDACTED', kind: 'env_var_value' as const }];
    const r = redactValue(`a ${fake.aws} b`, { secrets });
    expect(totalOf(scanValue(r.value, { secrets }))).toBe(0);
  });
});

describe('the walk', () => {
  it('redacts every string at any depth, counts by kind, keeps structure and non-strings', () => {
    const input = {
      type: 'message',
      id: 'e1',
      n: 3,
      ok: true,
      nothing: null,
      message: { content: [{ type: 'text', text: `key ${fake.aws}` }, { type: 'toolCall', arguments: { cmd: `echo ${fake.github}`, env: [fake.aws] } }] },
    };
    const r = redactValue(input, { homeDir: '/home/ann' });
    expect(r.counts).toEqual({ aws_access_key: 2, github_token: 1 });
    expect(JSON.stringify(r.value)).not.toContain(fake.aws);
    expect(JSON.stringify(r.value)).not.toContain(fake.github);
    expect(r.value.n).toBe(3);
    expect(r.value.ok).toBe(true);
    expect(r.value.nothing).toBeNull();
    expect(r.value.id).toBe('e1');
    // The input is not modified.
    expect(JSON.stringify(input)).toContain(fake.aws);
  });

  it('leaves base64 image data alone', () => {
    const data = `AAAA/${fake.aws}/BBBB`;
    const r = redactValue({ type: 'image', mimeType: 'image/png', data });
    expect(r.value.data).toBe(data);
  });

  it('scanValue finds secrets in object keys (which it never rewrites)', () => {
    const v = { [fake.github]: 1 };
    expect(scanValue(v)).toEqual({ github_token: 1 });
    expect(Object.keys(redactValue(v).value)).toEqual([fake.github]);
  });

  it('describeCounts is stable and readable', () => {
    expect(describeCounts({ private_key: 1, aws_access_key: 2 })).toBe('2 aws_access_key, 1 private_key');
    expect(describeCounts({})).toBe('nothing');
  });

  it('handles a multi-megabyte string in reasonable time', () => {
    const big = ('lorem ipsum dolor sit amet API_KEYS_ARE_FUN consectetur ' + 'x'.repeat(200) + '\n').repeat(40_000);
    const t = Date.now();
    // Long unbroken words are where unbounded repetitions backtrack quadratically.
    const word = 'aB3'.repeat(700_000);
    const b64ish = 'ab+/cd9:'.repeat(250_000);
    const r = redactValue({ big: big + fake.aws, word, b64ish }, { homeDir: '/home/ann', secrets: secretsFromEnv({ A_TOKEN: 'qwertyuiop' }) });
    expect(r.counts).toEqual({ aws_access_key: 1 });
    // Generous: a guard against pathological backtracking, not a speed goal.
    expect(Date.now() - t).toBeLessThan(20_000);
  });
});

describe('property: whatever surrounds a secret, redaction removes it and the re-scan is clean', () => {
  const known = [{ name: 'MY_TOKEN', value: 'known-secret-value-42', kind: 'env_var_value' as const }];
  // A bare 40-character AWS secret looks like any hash: it is only found after its name, so the property gives it one.
  const secrets: [string, string][] = Object.entries(fake).map(([k, v]) => [k === 'awsSecret' ? `aws_secret_access_key=${v}` : v, v]);
  secrets.push([known[0]!.value, known[0]!.value]);
  it('holds for random text, JSON nesting and neighbouring punctuation', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 30 }), fc.constantFrom(...secrets), fc.constantFrom(' ', '\n', '\t', '"', "'", '`', '(', '[', '{', '<', '>', ',', ';', '=', ':', '/', '@')), { minLength: 1, maxLength: 4 }),
        fc.string({ maxLength: 30 }),
        (parts, tail) => {
          const text = parts.map(([before, [written], sep]) => `${before}${sep}${written}${sep}`).join('') + tail;
          const r = redactValue({ deep: [{ text }] }, { secrets: known, homeDir: '/home/ann' });
          const out = r.value.deep[0]!.text;
          for (const [, [, secret]] of parts) expect(out).not.toContain(secret);
          expect(totalOf(scanValue(r.value, { secrets: known, homeDir: '/home/ann' }))).toBe(0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
