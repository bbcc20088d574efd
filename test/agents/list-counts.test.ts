// `list` shows Claude Code and Codex sessions' message counts (as pi counts its own), kept by the mirrors' tail state:
// from the first mirroring, a pull on another machine, appends, and once again after the caches of an older sessync.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shortId } from '../../cli/format/short-id.js';
import { useServer } from '../sync/helpers.js';
import { AllAgentsMachine, CLAUDE_SESSION, CODEX_SESSION, fixturesPresent } from './all-agents-rig.js';

if (!fixturesPresent) console.warn('Claude Code or Codex fixtures not found under ../shared/fixtures: the list count tests are skipped');

const REMOTE = 'git@github.com:Acme/Counted.git';
/** The fixtures' counts (test/agents/message-count.test.ts says how they are made up). */
const CLAUDE_MESSAGES = 14;
const CODEX_MESSAGES = 14;
const AT = '2026-01-02T00:00:00.000Z';

type Row = { id: string; messageCount?: number; agent?: string };
const counts = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.agent ?? 'pi', r.messageCount]));

/** A Claude Code response written as Claude Code writes it: one line per content block, all with its message id. */
function claudeResponse(session: string, cwd: string, parent: string, msgId: string, uuids: string[]): object[] {
  return uuids.map((uuid, i) => ({
    parentUuid: i === 0 ? parent : uuids[i - 1],
    isSidechain: false,
    cwd,
    sessionId: session,
    version: '2.0.28',
    type: 'assistant',
    message: { id: msgId, role: 'assistant', content: [i === 0 ? { type: 'thinking', thinking: 'think' } : { type: 'text', text: `part ${i}` }] },
    uuid,
    timestamp: AT,
  }));
}

const claudeUser = (session: string, cwd: string, parent: string, uuid: string, content: string) => ({ parentUuid: parent, isSidechain: false, cwd, sessionId: session, version: '2.0.28', type: 'user', message: { role: 'user', content }, uuid, timestamp: AT });
const codexItem = (payload: object) => ({ timestamp: AT, type: 'response_item', payload });
const lastUuid = (path: string) => [...readFileSync(path, 'utf8').matchAll(/"uuid":"([^"]+)"/g)].at(-1)![1]!;

describe.skipIf(!fixturesPresent)('list: message counts of Claude Code and Codex sessions (real CLI)', () => {
  const rig = useServer(undefined, 'sessync-list-counts-');

  it('counts from the first mirroring, cold and warm, in text and --json, and as the files grow', async () => {
    const m = new AllAgentsMachine(rig.root, 'grow');
    const files = m.placeFixtures();
    const pi = await m.newSession();
    await m.say(pi, 'one', 'two');
    const cold = await m.ok(['list', '--json']);
    expect(counts(cold)).toEqual({ pi: 2, 'claude-code': CLAUDE_MESSAGES, codex: CODEX_MESSAGES });
    expect(await m.ok(['list', '--json'])).toEqual(cold); // warm: from the list cache
    const text = await m.ok(['list']);
    expect(text).toMatch(new RegExp(`^${shortId(CLAUDE_SESSION)} .* ${CLAUDE_MESSAGES} msgs .*\\(claude-code\\)$`, 'm'));
    expect(text).toMatch(new RegExp(`^${shortId(CODEX_SESSION)} .* ${CODEX_MESSAGES} msgs .*\\(codex\\)$`, 'm'));

    // Claude Code appends a prompt and a response of two lines: two messages more.
    const cwd = JSON.parse(readFileSync(files.claude, 'utf8').split('\n')[1]!).cwd as string;
    const u = '11111111-0000-4000-8000-000000000001';
    m.append(files.claude, claudeUser(CLAUDE_SESSION, cwd, lastUuid(files.claude), u, 'and now?'), ...claudeResponse(CLAUDE_SESSION, cwd, u, 'msg_grow_1', ['11111111-0000-4000-8000-000000000002', '11111111-0000-4000-8000-000000000003']));
    // Codex appends a typed message and one response of three items, and the UI's copies of both.
    m.append(
      files.codex,
      codexItem({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and now?' }] }),
      { timestamp: AT, type: 'event_msg', payload: { type: 'user_message', message: 'and now?' } },
      codexItem({ type: 'reasoning', summary: [], encrypted_content: 'x' }),
      codexItem({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] }),
      codexItem({ type: 'ghost_snapshot', ghost_commit: {} }),
      { timestamp: AT, type: 'event_msg', payload: { type: 'agent_message', message: 'done' } },
    );
    expect(counts(await m.ok(['list', '--json']))).toEqual({ pi: 2, 'claude-code': CLAUDE_MESSAGES + 2, codex: CODEX_MESSAGES + 2 });

    // The same Claude Code response goes on in a later write: still one response (the mark kept in the tail state).
    m.append(files.claude, ...claudeResponse(CLAUDE_SESSION, cwd, '11111111-0000-4000-8000-000000000003', 'msg_grow_1', ['11111111-0000-4000-8000-000000000004']).map((l) => ({ ...l, message: { id: 'msg_grow_1', role: 'assistant', content: [{ type: 'text', text: 'more' }] } })));
    expect(counts(await m.ok(['list', '--json']))['claude-code']).toBe(CLAUDE_MESSAGES + 2);
    m.append(files.claude, ...claudeResponse(CLAUDE_SESSION, cwd, '11111111-0000-4000-8000-000000000004', 'msg_grow_2', ['11111111-0000-4000-8000-000000000005']));
    expect(counts(await m.ok(['list', '--json']))['claude-code']).toBe(CLAUDE_MESSAGES + 3);
  });

  it('a machine that pulls the sessions lists the same counts, and counts what later pulls append', async () => {
    const a = new AllAgentsMachine(rig.root, 'pull-a', { remote: REMOTE });
    const b = new AllAgentsMachine(rig.root, 'pull-b', { remote: REMOTE });
    await a.login(rig.server);
    await b.login(rig.server);
    const files = a.placeFixtures();
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, createdSessions: 2 });
    expect(counts(await b.ok(['list', '--json']))).toEqual({ 'claude-code': CLAUDE_MESSAGES, codex: CODEX_MESSAGES });

    const cwd = JSON.parse(readFileSync(files.claude, 'utf8').split('\n')[1]!).cwd as string;
    a.append(files.claude, claudeUser(CLAUDE_SESSION, cwd, lastUuid(files.claude), '22222222-0000-4000-8000-000000000001', 'more'));
    a.append(files.codex, codexItem({ type: 'function_call_output', call_id: 'c9', output: 'ok' }));
    expect(await a.ok(['sync', '--json'])).toMatchObject({ failed: 0, pushedEntries: 2 });
    expect(await b.ok(['sync', '--json'])).toMatchObject({ failed: 0, pulledEntries: 2 });
    expect(counts(await b.ok(['list', '--json']))).toEqual({ 'claude-code': CLAUDE_MESSAGES + 1, codex: CODEX_MESSAGES + 1 });
  });

  it('caches of an older sessync that said 0: unknown (?) at once, then the true count from the file once it changes', async () => {
    const m = new AllAgentsMachine(rig.root, 'upgrade');
    const files = m.placeFixtures();
    expect(counts(await m.ok(['list', '--json']))).toEqual({ 'claude-code': CLAUDE_MESSAGES, codex: CODEX_MESSAGES });
    // What an older sessync left: mirror tail states without the count rule that said 0, list rows of format 4 saying 0.
    const tailDir = join(m.home, 'cache', 'tail');
    let mirrors = 0;
    for (const f of readdirSync(tailDir)) {
      const p = join(tailDir, f);
      const s = JSON.parse(readFileSync(p, 'utf8'));
      if (!String(s.path).includes('/agents/')) continue; // the mirrors' (sessync's own home), not pi's files
      delete s.countRule;
      delete s.messageMark;
      s.messageCount = 0;
      writeFileSync(p, JSON.stringify(s));
      mirrors++;
    }
    expect(mirrors).toBe(2);
    const listDir = join(m.home, 'cache', 'list');
    for (const f of readdirSync(listDir)) {
      const p = join(listDir, f);
      const c = JSON.parse(readFileSync(p, 'utf8'));
      c.format = 4;
      for (const r of c.rows) r[7] = 0;
      writeFileSync(p, JSON.stringify(c));
    }
    const listed = await m.ok(['list', '--json']);
    expect(listed.map((r: Row) => r.messageCount)).toEqual([undefined, undefined]); // no longer a false 0
    expect(await m.ok(['list'])).toMatch(/^\S+ .* {3}\? msgs .*\(claude-code\)$/m);
    const cwd = JSON.parse(readFileSync(files.claude, 'utf8').split('\n')[1]!).cwd as string;
    m.append(files.claude, claudeUser(CLAUDE_SESSION, cwd, lastUuid(files.claude), '33333333-0000-4000-8000-000000000001', 'again'));
    expect(counts(await m.ok(['list', '--json']))['claude-code']).toBe(CLAUDE_MESSAGES + 1); // the whole mirror counted again
  });
});
