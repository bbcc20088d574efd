// The package as users get it: `npm pack`, `npm i -g --prefix TMP <tgz>`, then the installed `sessync` away from
// the checkout: help, version, `serve` on a free port, login/push/pull between two homes, npx, dist/server.mjs.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { copyCheckout, describeRun, exitOf, firstLine, outsideEnv, registryReachable, runProgram, type Run } from './install-rig.js';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const registry = registryReachable();
const INSTALL_TIMEOUT = 300_000;

if (!registry.ok && process.env.CI === 'true') {
  // CI has the npm registry (.ci/run installs from it), so an unreachable one is a broken setup, not a reason to skip.
  describe('npm pack + npm i -g', () => {
    it('needs the npm registry', () => {
      throw new Error(`CI=true but the npm registry cannot be reached (npm ping: ${registry.why}); the install test fetches the runtime dependencies from it`);
    });
  });
} else if (!registry.ok) {
  console.warn(
    [
      '',
      '################################################################################',
      '#  Pack-and-install test SKIPPED: the npm registry cannot be reached.',
      `#  npm ping said: ${registry.why}`,
      '#  It installs the tarball with its runtime dependencies from the registry.',
      '################################################################################',
      '',
    ].join('\n'),
  );
  describe.skip('npm pack + npm i -g (SKIPPED: npm registry unreachable)', () => {
    it('needs the npm registry', () => {});
  });
} else {
  describe('npm pack + npm i -g --prefix, run from outside the checkout', () => {
    const t = tempDir('sessync-install-');
    const prefix = join(t.dir, 'prefix');
    const work = join(t.dir, 'work');
    // A private npm cache: nothing of this test lands in the user's ~/.npm (npx installs there otherwise).
    const cache = join(t.dir, 'npm-cache');
    const env = outsideEnv([join(prefix, 'bin')]);
    const children: ChildProcess[] = [];
    let tarball = '';
    let packedFiles: string[] = [];
    let installLog: Run | undefined;

    const npm = (args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) =>
      runProgram('npm', [...args, '--cache', cache, '--no-audit', '--no-fund'], { cwd, env: { ...env, ...extra }, timeoutMs: INSTALL_TIMEOUT });
    /** The installed `sessync`, found on PATH (the prefix's bin), never the checkout's. */
    const sessync = (args: string[], home: string, input?: string) =>
      runProgram('sessync', args, { cwd: join(work, 'app'), env: { ...env, SESSYNC_HOME: home }, ...(input === undefined ? {} : { input }) });
    const ok = async (args: string[], home: string, input?: string) => {
      const r = await sessync([...args, '--json'], home, input);
      expect(r.code, `sessync ${args.join(' ')}: ${describeRun(r)}`).toBe(0);
      return JSON.parse(r.stdout);
    };

    beforeAll(async () => {
      const src = join(t.dir, 'src');
      copyCheckout(src);
      mkdirSync(join(work, 'app'), { recursive: true });
      // prepack builds dist/ in the copy, which has none: the tarball is what a fresh clone packs.
      const packed = await npm(['pack', '--json', '--pack-destination', t.dir], src);
      expect(packed.code, `npm pack: ${describeRun(packed)}`).toBe(0);
      const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
      tarball = join(t.dir, info[0]!.filename);
      packedFiles = info[0]!.files.map((f) => f.path).sort();
      installLog = await npm(['i', '-g', '--prefix', prefix, tarball], work);
      expect(installLog.code, `npm i -g: ${describeRun(installLog)}`).toBe(0);
    }, INSTALL_TIMEOUT);

    afterAll(async () => {
      for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      t.cleanup();
    });

    it('the tarball holds the built JavaScript and the launcher, no sources, and no install-time scripts', () => {
      expect(packedFiles).toContain('cli/bin.mjs');
      expect(packedFiles).toContain('dist/cli.mjs');
      expect(packedFiles).toContain('dist/server.mjs');
      expect(packedFiles.filter((f) => /\.ts$/.test(f))).toEqual([]);
      expect(packedFiles.filter((f) => !/^(package\.json|README\.md|cli\/bin\.mjs|dist\/.+\.mjs(\.map)?)$/.test(f))).toEqual([]);
      const installed = JSON.parse(readFileSync(join(prefix, 'lib/node_modules', pkg.name, 'package.json'), 'utf8')) as {
        bin: Record<string, string>;
        scripts?: Record<string, string>;
      };
      expect(installed.bin.sessync).toMatch(/\.mjs$/);
      // A `prepare` or install hook would run (or be warned about) on every user's machine, where esbuild is absent.
      for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(installed.scripts?.[hook], hook).toBeUndefined();
      expect(installLog!.stderr).not.toMatch(/install-scripts|ERR/);
    });

    it('installs only the runtime dependencies, and the bin on the prefix is the installed launcher', () => {
      const deps = readdirSync(join(prefix, 'lib/node_modules', pkg.name, 'node_modules')).flatMap((d) =>
        d.startsWith('@') ? readdirSync(join(prefix, 'lib/node_modules', pkg.name, 'node_modules', d)).map((s) => `${d}/${s}`) : [d],
      );
      for (const dev of Object.keys(pkg.devDependencies)) expect(deps, `dev dependency ${dev} was installed`).not.toContain(dev);
      for (const dep of Object.keys(pkg.dependencies)) expect(deps).toContain(dep);
      const bin = join(prefix, 'bin', 'sessync');
      expect(lstatSync(bin).isSymbolicLink()).toBe(true);
      expect(realpathSync(bin)).toBe(realpathSync(join(prefix, 'lib/node_modules', pkg.name, 'cli/bin.mjs')));
    });

    it('help and version run from the prefix with no checkout on PATH or in the cwd', async () => {
      expect(env.PATH).not.toContain('node_modules');
      const home = join(t.dir, 'help-home');
      const help = await sessync(['--help'], home);
      expect(help.code, describeRun(help)).toBe(0);
      for (const cmd of ['serve', 'login', 'push', 'pull', 'sync', 'version']) expect(help.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
      const serveHelp = await sessync(['serve', '--help'], home);
      expect(serveHelp.stdout).toContain('--store');
      expect(await ok(['version'], home)).toEqual({ version: pkg.version });
      expect((await sessync(['version'], home)).stdout.trim()).toBe(`sessync ${pkg.version}`);
    });

    it('serve on a free port; login, push and pull between two homes; pushes back; stops on SIGTERM', async () => {
      const child = spawn('sessync', ['serve', '--json', '--port', '0'], {
        cwd: work,
        env: { ...env, SESSYNC_HOME: join(t.dir, 'server-home') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const first = JSON.parse(await firstLine(child, 'installed sessync serve')) as { url: string; token: string };
      expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(first.url.endsWith(':0')).toBe(false);

      // Two machines: one project path, one SESSYNC_HOME each.
      const laptop = join(t.dir, 'laptop');
      const desktop = join(t.dir, 'desktop');
      const { id } = await ok(['new'], laptop);
      await ok(['append', id], laptop, '{"type":"message","message":{"role":"user","content":"hello from the laptop"}}\n');
      await ok(['login', first.url, '--token', first.token, '--no-encrypt'], laptop);
      expect(await ok(['push'], laptop)).toMatchObject({ pushedEntries: 1, failed: 0 });

      await ok(['login', first.url, '--token', first.token], desktop);
      expect(await ok(['pull'], desktop)).toMatchObject({ createdSessions: 1 });
      const onDesktop = await ok(['log', id], desktop);
      expect(JSON.stringify(onDesktop.entries)).toContain('hello from the laptop');

      await ok(['append', id], desktop, '{"type":"message","message":{"role":"assistant","provider":"anthropic","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hello from the desktop"}]}}\n');
      expect(await ok(['push'], desktop)).toMatchObject({ pushedEntries: 1, failed: 0 });
      expect(await ok(['pull'], laptop)).toMatchObject({ pulledEntries: 1 });
      const onLaptop = await ok(['log', id], laptop);
      expect(onLaptop.leafId).toBe((await ok(['log', id], desktop)).leafId);
      expect(JSON.stringify(onLaptop.entries)).toContain('hello from the desktop');

      child.kill('SIGTERM');
      expect(await exitOf(child)).toEqual({ code: 0, signal: null });
    });

    it('npx sessync runs the prefix install, and the tarball directly', async () => {
      const viaPrefix = await runProgram('npx', ['--no', 'sessync', 'version'], { cwd: work, env: { ...env, npm_config_prefix: prefix } });
      expect(viaPrefix.code, describeRun(viaPrefix)).toBe(0);
      expect(viaPrefix.stdout.trim()).toBe(`sessync ${pkg.version}`);
      const viaTarball = await runProgram('npx', ['--yes', '--cache', cache, '--package', tarball, 'sessync', 'version'], {
        cwd: work,
        env,
        timeoutMs: INSTALL_TIMEOUT,
      });
      expect(viaTarball.code, describeRun(viaTarball)).toBe(0);
      expect(viaTarball.stdout.trim()).toBe(`sessync ${pkg.version}`);
    }, INSTALL_TIMEOUT);

    it('the self-host bundle runs from the package: node dist/server.mjs', async () => {
      const server = join(prefix, 'lib/node_modules', pkg.name, 'dist/server.mjs');
      expect(existsSync(server)).toBe(true);
      const child = spawn(process.execPath, [server], {
        cwd: work,
        env: { ...env, PORT: '0', SESSYNC_STORE: 'fs', SESSYNC_DATA_DIR: join(t.dir, 'self-host'), SESSYNC_ADMIN_SECRET: 'install-test-admin-secret-0123456789' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const url = /listening on (http:\/\/\S+)/.exec(await firstLine(child, 'node dist/server.mjs'))?.[1];
      expect(url).toBeDefined();
      expect(await (await fetch(`${url}/v1/health`)).json()).toEqual({ service: 'sessync', api: 1 });
      child.kill('SIGTERM');
      expect(await exitOf(child)).toEqual({ code: 0, signal: null });
    });
  });
}
