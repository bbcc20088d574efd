// Project keys: remote URL forms normalise to one key; no remote -> root commit; no repository -> path.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseRemote, parseMaps, projectKey } from '../../cli/sync/project-key.js';
import { tempDir } from '../helpers/cli.js';

describe('normaliseRemote', () => {
  const cases: [string, string][] = [
    ['git@github.com:Owner/Repo.git', 'github.com/Owner/Repo'],
    ['https://github.com/Owner/Repo', 'github.com/Owner/Repo'],
    ['https://github.com/Owner/Repo.git/', 'github.com/Owner/Repo'],
    ['https://user:secret@GitHub.COM/Owner/Repo.git', 'github.com/Owner/Repo'],
    ['ssh://git@github.com:22/Owner/Repo.git', 'github.com/Owner/Repo'],
    ['git+ssh://git@gitlab.example.org/group/sub/proj.git', 'gitlab.example.org/group/sub/proj'],
    ['git://example.org/x/y', 'example.org/x/y'],
    ['gitea.local:me/tool', 'gitea.local/me/tool'],
  ];
  for (const [url, key] of cases) it(`${url} -> ${key}`, () => expect(normaliseRemote(url)).toBe(key));
});

describe('projectKey', () => {
  it('prefers origin, then the root commit, then the path', async () => {
    const t = tempDir();
    try {
      const withRemote = join(t.dir, 'a');
      const withCommit = join(t.dir, 'b');
      const plain = join(t.dir, 'c');
      for (const d of [withRemote, withCommit, plain]) mkdirSync(d);
      execFileSync('git', ['init', '-q', withRemote]);
      execFileSync('git', ['-C', withRemote, 'remote', 'add', 'origin', 'git@github.com:Acme/App.git']);
      execFileSync('git', ['init', '-q', withCommit]);
      execFileSync('git', ['-C', withCommit, '-c', 'user.email=t@example.org', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'root']);
      const root = execFileSync('git', ['-C', withCommit, 'rev-list', '--max-parents=0', 'HEAD'], { encoding: 'utf8' }).trim();
      expect(await projectKey(withRemote)).toBe('github.com/Acme/App');
      expect(await projectKey(withCommit)).toBe(`git-root:${root}`);
      expect(await projectKey(plain)).toMatch(/^(path:|git-root:)/); // a temp dir inside some other repo would give that repo's key
      expect(await projectKey(join(t.dir, 'missing'))).toBe(`path:${join(t.dir, 'missing')}`);
    } finally {
      t.cleanup();
    }
  });

  it('parses --map KEY=PATH and refuses other forms', () => {
    expect(parseMaps(['github.com/a/b=/home/me/b', 'path:/x=y=/z'])).toEqual({ 'github.com/a/b': '/home/me/b', 'path:/x=y': '/z' });
    expect(() => parseMaps(['nokey'])).toThrow(/KEY=PATH/);
  });
});
