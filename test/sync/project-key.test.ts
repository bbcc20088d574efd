// Project keys: remote URL forms normalise to one key; no remote -> root commit; no repository -> path.
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normaliseRemote, parseMaps, placeInProject, projectKey } from '../../cli/sync/project-key.js';
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

describe('placeInProject (a header\'s cwdInProject below the local project)', () => {
  it('follows a plain subfolder that exists here, from the repository\'s top; anything else stays at the placed folder', async () => {
    const t = tempDir();
    try {
      const top = realpathSync(t.dir);
      const repo = join(top, 'repo');
      execFileSync('git', ['init', '-q', repo]);
      // Folders whose names an unchecked join would follow on this machine (a backslash is a plain character here).
      for (const d of ['pkg/web', 'a\\..\\..', 'C:', 'C:/x', '\\\\server\\x', 'pkg/.git/x']) mkdirSync(join(repo, d), { recursive: true });
      expect(await placeInProject(repo, 'pkg/web')).toBe(join(repo, 'pkg', 'web'));
      expect(await placeInProject(join(repo, 'pkg'), 'pkg/web')).toBe(join(repo, 'pkg', 'web')); // from the top, not from the placed folder
      expect(await placeInProject(repo, 'pkg/missing')).toBe(repo);
      expect(await placeInProject(repo, undefined)).toBe(repo);
      expect(await placeInProject(repo, 7)).toBe(repo);
      const outside = join(top, 'plain');
      mkdirSync(join(outside, 'sub'), { recursive: true });
      expect(await placeInProject(outside, 'sub')).toBe(join(outside, 'sub'));
      // Not a plain relative path of this project: the session is filed at the project's top, as without the field.
      for (const bad of ['', '/etc', '..', 'pkg/../..', 'pkg//web', './pkg', 'a\\..\\..', 'C:', 'C:/x', 'c:x', '\\\\server\\x', '//server/x', '.git', '.git/hooks', 'pkg/.git/x', '.GIT/hooks']) {
        expect(await placeInProject(repo, bad), bad).toBe(repo);
      }
    } finally {
      t.cleanup();
    }
  });
});
