// The one agent conformance suite: identity, parents, leaf, session files and a byte-exact round trip through merge,
// run by each agent's test file on that agent's real files.
import { describe, expect, it } from 'vitest';
import type { Agent, AgentLine, SessionFile } from '../../shared/agents/agent.js';
import type { SessionEntry } from '../../shared/entry.js';
import { exactTexts, mergeEntries, type IncomingEntry } from '../../shared/merge.js';
import { serializeLine } from '../../shared/jsonl.js';
import { ENTRY_ID_RE } from '../../shared/wire.js';

/** One session as the agent wrote it: its files (main first) with their exact text. */
export interface SessionSample {
  name: string;
  session: string;
  files: { file: SessionFile; text: string }[];
}

/** A project folder's listing and which of its paths belong to `session`. */
export interface FilesCase {
  session: string;
  rels: string[];
  firstLines?: Map<string, string>;
  expect: SessionFile[];
}

export interface AgentCase {
  agent: Agent;
  samples: SessionSample[];
  files: FilesCase[];
  /** The agent's leaf rule can be pinned by appending its own lines (pinLeaf), so two machines resume on one branch. */
  pinsLeaf: boolean;
  /**
   * Samples whose lines the agent's sync path is known to rewrite (same content, other bytes): their byte-exact checks
   * are expected to fail (it.fails, so fixing it shows), and the same checks by content must pass.
   */
  rewrites?: ReadonlySet<string>;
  /** Pulled lines are appended in the order they were written: a machine holding a prefix ends with the very same file. */
  keepsFileOrder?: boolean;
  /**
   * The agent's file holds one line of work (Codex): two machines' divergent lines cannot share it, so sessync makes the
   * later one a fork session; the leaf agreement is that rule's (its own tests), not one file's syncLeaf.
   */
  forksOnDivergence?: boolean;
}

interface Parsed {
  file: SessionFile;
  lines: AgentLine[];
}

function parseAll(agent: Agent, s: SessionSample): Parsed[] {
  return s.files.map(({ file, text }) => ({ file, lines: agent.parseFile(text, file).lines }));
}

function mainLines(agent: Agent, text: string, file: SessionFile): AgentLine[] {
  return agent.parseFile(text, file).lines;
}

/** The exact line each of a file's lines is pushed as. */
function wireOf(agent: Agent, lines: readonly AgentLine[], file: SessionFile): string[] {
  return lines.map((l) => agent.wireLine?.(l, file) ?? serializeLine(agent.toEntry(l, file)));
}

/** What crosses the wire: each line of a batch body, read back as its entry and its exact text (as pull does). */
function overTheWire(texts: readonly string[]): IncomingEntry[] {
  return texts.map((text) => ({ entry: JSON.parse(text) as SessionEntry, text }));
}

/** A machine's files after merging `incoming` into what it holds: appended lines only, in merge order. */
function mergeInto(agent: Agent, have: Map<string, string>, local: Parsed[], incoming: readonly string[]): Map<string, string> {
  const map = new Map<string, SessionEntry>();
  for (const p of local) for (const l of p.lines) map.set(l.id, agent.toEntry(l, p.file));
  const wire = overTheWire(incoming);
  const texts = exactTexts(wire);
  const m = mergeEntries(map, wire);
  expect(m.conflicts).toEqual([]);
  const out = new Map(have);
  const mainRel = local[0]!.file.rel;
  for (const e of m.toAppend) {
    const back = agent.fromEntry(e, texts.get(e));
    expect(back, `entry ${e.id} comes back as a line`).not.toBeNull();
    const rel = back!.rel === '' ? mainRel : back!.rel;
    out.set(rel, back!.whole ? back!.text : `${out.get(rel) ?? ''}${back!.text}\n`);
  }
  return out;
}

/** The exact texts of the usable lines of a file (a pi header travels in the session meta, not as a line), sorted. */
function linesOf(agent: Agent, text: string, file: SessionFile, byContent = false): string[] {
  return agent
    .parseFile(text, file)
    .lines.map((l) => (byContent ? JSON.stringify(l.value) : l.text))
    .sort();
}

/** Text of the first `n` lines. */
function prefix(text: string, n: number): string {
  const parts = text.split('\n');
  return parts.slice(0, n).map((l) => `${l}\n`).join('');
}

export function agentConformance(c: AgentCase): void {
  const { agent } = c;
  describe(`agent ${agent.name}: conformance`, () => {
    for (const s of c.samples) {
      describe(s.name, () => {
        it('identity: every usable line has one, valid on the wire, unique in the session, stable as the file grows', () => {
          const parsed = parseAll(agent, s);
          const ids = parsed.flatMap((p) => p.lines.map((l) => l.id));
          expect(ids.length).toBeGreaterThan(0);
          for (const id of ids) expect(id).toMatch(ENTRY_ID_RE);
          expect(new Set(ids).size).toBe(ids.length);
          for (const { file, text } of s.files) {
            if (file.kind === 'tool-result') continue;
            const all = mainLines(agent, text, file);
            const total = text.split('\n').length - 1;
            const half = mainLines(agent, prefix(text, Math.floor(total / 2)), file);
            expect(half.map((l) => l.id)).toEqual(all.slice(0, half.length).map((l) => l.id));
            // The exact text of each line is kept.
            const raw = text.split('\n');
            for (const l of all) expect(l.text).toBe(raw[l.line - 1]);
          }
        });

        it('parents: each names a line of the same file, never itself, and the links have no cycle', () => {
          for (const p of parseAll(agent, s)) {
            const ids = new Map(p.lines.map((l) => [l.id, l]));
            for (const l of p.lines) {
              if (l.parent === null) continue;
              expect(l.parent).not.toBe(l.id);
              expect(ids.has(l.parent), `parent ${l.parent} of line ${l.line} in ${p.file.rel}`).toBe(true);
            }
            // Walk each chain once: a line already known to reach a root is not walked again.
            const reachesRoot = new Set<string>();
            for (const l of p.lines) {
              const path: string[] = [];
              let at: AgentLine | undefined = l;
              while (at && !reachesRoot.has(at.id) && at.parent !== null) {
                path.push(at.id);
                expect(path.length, `cycle through ${l.id}`).toBeLessThanOrEqual(p.lines.length);
                at = ids.get(at.parent);
              }
              for (const id of path) reachesRoot.add(id);
              if (at) reachesRoot.add(at.id);
            }
          }
        });

        it('leaf: the agent rule and the sync leaf name lines of the main file', () => {
          const main = parseAll(agent, s)[0]!;
          const ids = new Set(main.lines.map((l) => l.id));
          const leaf = agent.leaf(main.lines);
          const syncLeaf = agent.syncLeaf(main.lines);
          expect(leaf).not.toBeNull();
          expect(ids.has(leaf!)).toBe(true);
          expect(ids.has(syncLeaf!)).toBe(true);
          if (c.pinsLeaf) {
            // On one machine the agent and sessync already agree: no line is added to a session nobody else wrote to.
            expect(agent.pinLeaf(main.lines, syncLeaf!, s.session)).toEqual([]);
            // Any line can be made the leaf with the agent's own kind of line.
            // Any earlier point of the conversation (the leaf of the file's first half) can be made the leaf.
            const text = s.files[0]!.text;
            const other = agent.leaf(mainLines(agent, prefix(text, Math.floor((text.split('\n').length - 1) / 2)), main.file));
            if (other !== null && other !== leaf) {
              const pin = agent.pinLeaf(main.lines, other, s.session);
              expect(agent.leaf(mainLines(agent, text + pin.map((l) => `${l}\n`).join(''), main.file))).toBe(other);
            }
          }
        });

        it('hints: the main file names a cwd', () => {
          const main = s.files[0]!;
          expect(typeof agent.projectHints(agent.parseFile(main.text, main.file)).cwd).toBe('string');
        });

        const rewrites = c.rewrites?.has(s.name) === true;
        const exact = rewrites ? it.fails : it;
        const roundTrip = (byContent: boolean) => () => {
          const full = parseAll(agent, s);
          const incoming = full.flatMap((p) => wireOf(agent, p.lines, p.file));
          const mainText = s.files[0]!.text;
          const total = mainText.split('\n').length - 1;
          for (const keep of [0, 1, Math.floor(total / 3), total - 1]) {
            const have = new Map([[s.files[0]!.file.rel, prefix(mainText, keep)]]);
            const local: Parsed[] = [{ file: s.files[0]!.file, lines: mainLines(agent, have.get(s.files[0]!.file.rel)!, s.files[0]!.file) }];
            const out = mergeInto(agent, have, local, incoming);
            for (const { file, text } of s.files) {
              expect(linesOf(agent, out.get(file.rel) ?? '', file, byContent), `${file.rel} after keeping ${keep} lines`).toEqual(linesOf(agent, text, file, byContent));
              if (c.keepsFileOrder && !byContent) expect(out.get(file.rel), `${file.rel} after keeping ${keep} lines`).toBe(text);
            }
            // Merging again adds nothing.
            const again = mergeInto(agent, out, s.files.map(({ file }) => ({ file, lines: agent.parseFile(out.get(file.rel) ?? '', file).lines })), incoming);
            expect(again).toEqual(out);
          }
        };
        exact('round trip through merge: a machine holding a prefix ends with every line, byte-exact', roundTrip(false));
        if (rewrites) it('round trip through merge: every line by content (its bytes are a known defect)', roundTrip(true));

        const converge = (byContent: boolean) => () => {
          const main = s.files[0]!;
          const total = main.text.split('\n').length - 1;
          const cut = Math.floor(total / 2);
          const raw = main.text.split('\n').slice(0, total);
          const base = raw.slice(0, cut);
          // Machine A wrote the even lines after the cut, machine B the odd ones.
          const a = [...base, ...raw.slice(cut).filter((_, i) => i % 2 === 0)].map((l) => `${l}\n`).join('');
          const b = [...base, ...raw.slice(cut).filter((_, i) => i % 2 === 1)].map((l) => `${l}\n`).join('');
          const parsedA = mainLines(agent, a, main.file);
          const parsedB = mainLines(agent, b, main.file);
          const entriesOf = (ls: AgentLine[]) => wireOf(agent, ls, main.file);
          const rel = main.file.rel;
          const outA = mergeInto(agent, new Map([[rel, a]]), [{ file: main.file, lines: parsedA }], entriesOf(parsedB)).get(rel)!;
          const outB = mergeInto(agent, new Map([[rel, b]]), [{ file: main.file, lines: parsedB }], entriesOf(parsedA)).get(rel)!;
          expect(linesOf(agent, outA, main.file, byContent)).toEqual(linesOf(agent, main.text, main.file, byContent));
          expect(linesOf(agent, outB, main.file, byContent)).toEqual(linesOf(agent, main.text, main.file, byContent));
          const linesA = mainLines(agent, outA, main.file);
          const linesB = mainLines(agent, outB, main.file);
          if (!c.forksOnDivergence) expect(agent.syncLeaf(linesA)).toBe(agent.syncLeaf(linesB));
          if (c.pinsLeaf) {
            const leaf = agent.syncLeaf(linesA)!;
            const pinnedA = outA + agent.pinLeaf(linesA, leaf, s.session).map((l) => `${l}\n`).join('');
            const pinnedB = outB + agent.pinLeaf(linesB, leaf, s.session).map((l) => `${l}\n`).join('');
            expect(agent.leaf(mainLines(agent, pinnedA, main.file))).toBe(leaf);
            expect(agent.leaf(mainLines(agent, pinnedB, main.file))).toBe(leaf);
          }
        };
        exact('two machines that wrote different lines converge: same lines on both, byte-exact, one leaf when the agent can pin it', converge(false));
        if (rewrites) it('two machines converge by content (the bytes are a known defect)', converge(true));
      });
    }

    it('bad input: a line that is not JSON is a problem with its line number, and the lines around it are kept', () => {
      const s = c.samples[0]!;
      const main = s.files[0]!;
      const raw = main.text.split('\n');
      const broken = [...raw.slice(0, 2), '{"not json', ...raw.slice(2)].join('\n');
      const before = agent.parseFile(main.text, main.file);
      const after = agent.parseFile(broken, main.file);
      expect(after.problems.map((p) => p.line)).toContain(3);
      expect(after.lines.map((l) => l.text)).toEqual(before.lines.map((l) => l.text));
      const torn = agent.parseFile(`${main.text}{"half`, main.file);
      expect(torn.tail).toBe('{"half');
      expect(torn.lines.length).toBe(before.lines.length);
    });

    for (const f of c.files) {
      it(`session files of ${f.session}: ${f.expect.map((x) => x.rel).join(', ') || 'none'}`, () => {
        expect(agent.sessionFiles(f.session, f.rels, f.firstLines)).toEqual(f.expect);
        const main = f.expect.find((x) => x.kind === 'main');
        if (main) expect(agent.sessionOf(main.rel)).toBe(f.session);
      });
    }
  });
}
