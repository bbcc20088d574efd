// Pieces shared by the kill -9 and restart tests: kill a CLI run at a random point, a slow proxy, server heads.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CLI_BIN, REPO_ROOT } from '../helpers/cli.js';
import type { Machine, TestServer } from './helpers.js';

export type Outcome = 'killed' | 'finished';

/** `sessync <args> --json --cwd <project>` that must die by its kill point ($SESSYNC_KILL_POINT); returns how it ended. */
export function runUntilKilled(m: Machine, args: string[], point: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }> {
  const child = spawn(process.execPath, [CLI_BIN, ...args, '--json', '--cwd', m.project], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...m.env, SESSYNC_KILL_POINT: point },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, err })));
}

/**
 * `sessync <args> --json --cwd <project>` under strace (fsyncs, writes, sends, or `o.calls`; strings cut at `o.strings`
 * characters) into `trace`; its exit code and output.
 */
export function tracedRun(m: Machine, args: string[], trace: string, o: { calls?: string; strings?: number } = {}): Promise<{ code: number | null; out: string; err: string }> {
  const cmd = [process.execPath, CLI_BIN, ...args, '--json', '--cwd', m.project];
  const calls = o.calls ?? 'fsync,fdatasync,write,writev,sendto,sendmsg';
  const child = spawn('strace', ['-f', '-qq', '-y', '-s', String(o.strings ?? 40), '-e', `trace=${calls}`, '-o', trace, ...cmd], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...m.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })));
}

/**
 * From a tracedRun trace: fsyncs of files under `stateDir` (this machine's sync state, not its session files), per
 * window: before the first pull request, then after each. `others`: those of each window that are not the journal's.
 */
export function stateFsyncsByPullRequest(trace: string, stateDir: string): { windows: number[]; others: number[]; journal: number } {
  const windows: number[] = [0];
  const others: number[] = [0];
  let journal = 0;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    if (/POST \/v1\/(sessions\/[^ ]*\/pull|pulls) /.test(line)) {
      windows.push(0);
      others.push(0);
    } else if (/\b(fsync|fdatasync)\(\d+</.test(line) && line.includes(stateDir)) {
      windows[windows.length - 1]!++;
      if (line.includes('journal')) journal++;
      else others[others.length - 1]!++;
    }
  }
  return { windows, others, journal };
}

/** The calls a trace needs for stateWritesAfter: tracedRun's own, and file opens (which show the files made). */
export const STATE_WRITE_CALLS = 'fsync,fdatasync,write,writev,sendto,sendmsg,openat';

/**
 * From a tracedRun trace with STATE_WRITE_CALLS: what the run did to files under `stateDir` after the last line
 * matching `request` (its last request): fsyncs, and files created (opened with O_CREAT: each temp file of a write).
 */
export function stateWritesAfter(trace: string, stateDir: string, request: RegExp): { fsyncs: number; creates: number } {
  let fsyncs = 0;
  let creates = 0;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    if (request.test(line)) fsyncs = creates = 0;
    else if (!line.includes(stateDir)) continue;
    else if (/\b(fsync|fdatasync)\(\d+</.test(line)) fsyncs++;
    else if (/\bopenat\(.*O_CREAT/.test(line) && !/= -1 /.test(line)) creates++;
  }
  return { fsyncs, creates };
}

/**
 * strace -f lines with each call another thread cut (`<unfinished ...>`) joined to its `<... call resumed>` line, so
 * a call's arguments and result are on one line (under load the thread pool's calls are often cut).
 */
export function joinResumed(lines: string[]): string[] {
  const open = new Map<string, number>();
  const out: string[] = [];
  for (const line of lines) {
    const cut = /^(\d+) +(.*) <unfinished \.\.\.>$/.exec(line);
    if (cut) {
      open.set(cut[1]!, out.length);
      out.push(`${cut[1]} ${cut[2]}`);
      continue;
    }
    const resumed = /^(\d+) +<\.\.\. \w+ resumed>(.*)$/.exec(line);
    const at = resumed ? open.get(resumed[1]!) : undefined;
    if (resumed && at !== undefined) {
      out[at] = `${out[at]!}${resumed[2]!}`;
      open.delete(resumed[1]!);
      continue;
    }
    out.push(line);
  }
  return out;
}

/** strace is installed (the tests that count a real process's fsyncs skip without it). */
export function hasStrace(): boolean {
  try {
    execFileSync('strace', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts `sessync <args>` and SIGKILLs it after `delayMs` (or it finishes first). Returns how it ended. */
export function runAndKill(m: Machine, args: string[], delayMs: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args, '--cwd', m.project, '--json'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...m.env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d) => (err += d));
    const t = setTimeout(() => child.kill('SIGKILL'), delayMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(t);
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve('finished');
      else reject(new Error(`sessync ${args.join(' ')} exited ${code}: ${err}`));
    });
  });
}

/**
 * Did the killed run leave a batch written down but unacknowledged? Reads each server's state as the CLI does (read
 * here, synchronously, to keep the check a plain expression): the pack (`state-pack.jsonl`), over it the sessions' own
 * files (`sessions/<id>.json`), over those a many-session run's journal (`push-journal.jsonl`); any newest state with
 * a pending batch.
 */
export function pendingLeft(m: Machine): boolean {
  const servers = join(m.home, 'sync', 'servers');
  if (!existsSync(servers)) return false;
  for (const server of readdirSync(servers)) {
    const dir = join(servers, server);
    const newest = new Map<string, unknown>();
    const pack = join(dir, 'state-pack.jsonl');
    let packed: string | null = null; // the journal the pack folded in (a kill before its removal leaves it behind)
    const inPack = new Map<string, unknown>();
    if (existsSync(pack)) {
      const lines = readFileSync(pack, 'utf8').split('\n');
      packed = (JSON.parse(lines[0]!) as { journal: string | null }).journal;
      for (const line of lines.slice(1, -1)) {
        const r = JSON.parse(line) as { session: string; state: { pending?: unknown } };
        inPack.set(r.session, r.state.pending);
        newest.set(r.session, r.state.pending);
      }
    }
    const own = join(dir, 'sessions');
    for (const n of existsSync(own) ? readdirSync(own) : []) {
      if (!n.endsWith('.json')) continue;
      const st = JSON.parse(readFileSync(join(own, n), 'utf8')) as { pending?: unknown; forgotten?: true };
      if (st.forgotten) newest.delete(n.slice(0, -5));
      else newest.set(n.slice(0, -5), st.pending);
    }
    const journal = join(dir, 'push-journal.jsonl');
    if (existsSync(journal)) {
      let folded = false;
      for (const line of readFileSync(journal, 'utf8').split('\n').slice(0, -1)) {
        const r = JSON.parse(line) as { state?: { session: string; pending?: unknown }; forget?: string; journal?: string };
        if (r.journal !== undefined) folded = r.journal === packed;
        const session = r.state?.session ?? r.forget;
        if (session === undefined) continue;
        // Folded in already: the pack's state of the session is the newer (it has acknowledgements never journaled).
        const now = folded ? (inPack.has(session) ? { pending: inPack.get(session) } : null) : r.state ?? null;
        if (now) newest.set(session, now.pending);
        else newest.delete(session);
      }
    }
    if ([...newest.values()].some((x) => x != null)) return true;
  }
  return false;
}

/**
 * A real HTTP hop in front of workerd that holds each answer back 50-250 ms after the server has acted on the
 * request: widens the window where a batch is stored but its acknowledgement not yet recorded, so kills land there.
 */
export async function slowProxy(target: string): Promise<{ url: string; close(): void }> {
  const srv = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      const r = await fetch(target + req.url, {
        method: req.method!,
        headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection' && k !== 'content-length')) as Record<string, string>,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      });
      const body = Buffer.from(await r.arrayBuffer());
      await new Promise((ok) => setTimeout(ok, 50 + Math.random() * 200));
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
      res.end(body);
    } catch (e) {
      // The client sees a 502 and retries; say why here so a broken proxy is not mistaken for a sync bug.
      console.error(`proxy: ${req.method} ${req.url} failed: ${String(e)}`);
      res.writeHead(502).end();
    }
  });
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', () => ok()));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => srv.close() };
}

export async function heads(server: TestServer): Promise<{ session: string; host: string; seq: number }[]> {
  const r = await fetch(`${server.url}/v1/changes`, { headers: { authorization: `Bearer ${server.token}` } });
  if (!r.ok) throw new Error(`GET /v1/changes: ${r.status}`);
  return ((await r.json()) as { heads: { session: string; host: string; seq: number }[] }).heads;
}

/** Every head of the account as `session/host/seq`, sorted: compared before and after a run that must push nothing. */
export async function headKey(server: TestServer): Promise<string[]> {
  return (await heads(server)).map((h) => `${h.session}/${h.host}/${h.seq}`).sort();
}

/** The error of a `--json` run that failed: its last stderr line. */
export function errorOf(stderr: string): { code: string; message: string; retryable: boolean } {
  return (JSON.parse(stderr.trim().split('\n').at(-1)!) as { error: { code: string; message: string; retryable: boolean } }).error;
}

export async function until<T>(what: string, ms: number, f: () => Promise<T | undefined | false>, everyMs = 100): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Every entry id of the session as the server stores it, batch by batch (a pull from nothing, as a new machine would). */
export async function storedIds(server: TestServer, session: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: Record<string, number> = {};
  for (;;) {
    const r = await fetch(`${server.url}/v1/sessions/${session}/pull`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cursor }),
    });
    const page = (await r.json()) as { batches: { body: string }[]; cursor: Record<string, number>; more: boolean };
    for (const b of page.batches) for (const l of b.body.split('\n')) if (l) ids.push((JSON.parse(l) as { id: string }).id);
    cursor = page.cursor;
    if (!page.more) return ids;
  }
}
