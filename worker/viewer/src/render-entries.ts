// Turns session entries into DOM, with textContent only: session text is never parsed as HTML.
import type { RenderedPart } from '../../../shared/agents/agent.js';
import { renderAgentEntry } from '../../../shared/agents/claude-render.js';
import { renderCodexEntry } from '../../../shared/agents/codex-render.js';
import { jsonStringify } from '../../../shared/json-stringify.js';

type Obj = Record<string, unknown>;

/** Characters of a collapsed block rendered at once; the rest waits behind a button so a 5 MB tool output stays cheap. */
const PRE_CHUNK = 200_000;
const IMAGE_MIME = /^image\/(png|jpeg|gif|webp)$/;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * Appends nodes with appendChild: Workers' type declarations replace Element.append with
 * HTMLRewriter's signature, so the DOM's append does not typecheck in this project.
 */
function put(parent: Node, ...nodes: Node[]): void {
  for (const n of nodes) parent.appendChild(n);
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A <pre> that shows the first PRE_CHUNK characters and a button for each further chunk. */
function longPre(text: string): HTMLElement {
  const wrap = el('div');
  const pre = el('pre', undefined, text.slice(0, PRE_CHUNK));
  put(wrap, pre);
  let shown = Math.min(PRE_CHUNK, text.length);
  if (shown < text.length) {
    const more = el('button', 'more');
    const label = (): string => `Show more (${(text.length - shown).toLocaleString()} characters left)`;
    more.textContent = label();
    more.addEventListener('click', () => {
      put(pre, document.createTextNode(text.slice(shown, shown + PRE_CHUNK)));
      shown = Math.min(shown + PRE_CHUNK, text.length);
      if (shown >= text.length) more.remove();
      else more.textContent = label();
    });
    put(wrap, more);
  }
  return wrap;
}

/**
 * A collapsed block whose body is built on first open: a long session has thousands of tool
 * results, and building them all up front is what makes a 10 MB page sluggish.
 */
function lazyDetails(summary: string, cls: string, build: Array<() => Node>): HTMLDetailsElement {
  const d = el('details', cls);
  put(d, el('summary', undefined, summary));
  const pending = build;
  d.addEventListener('toggle', () => {
    if (!d.open) return;
    while (pending.length) put(d, pending.shift()!());
  });
  return d;
}

function oneLine(s: string, max = 120): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

/** Levels of tool arguments shown indented; deeper ones are compact (indenting n levels costs n² characters). */
const INDENT_LEVELS = 64;

/** Tool arguments as indented JSON, at any depth: a share may hold arguments nested far deeper than the stack. */
function json(v: unknown): string {
  return jsonStringify(v, { indent: 2, indentLevels: INDENT_LEVELS }) ?? String(v);
}

/** Text of a content field: a string, or the text parts of an array (images become a note). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObj(p) && p.type === 'text' ? str(p.text) : isObj(p) && p.type === 'image' ? '[image]' : '')).filter(Boolean).join('\n');
}

function image(part: Obj): Node {
  const mime = str(part.mimeType);
  const data = str(part.data);
  if (!IMAGE_MIME.test(mime) || !/^[A-Za-z0-9+/=]+$/.test(data)) return el('p', 'note', '[image not shown]');
  const img = el('img', 'shot');
  img.alt = 'image from the session';
  img.loading = 'lazy';
  img.src = `data:${mime};base64,${data}`;
  return img;
}

export class EntryRenderer {
  /** Tool calls by id, so a result lands inside the call it answers. */
  private readonly calls = new Map<string, { details: HTMLDetailsElement; pending: Array<() => Node> }>();
  count = 0;

  constructor(private readonly root: HTMLElement) {}

  private card(cls: string, role: string): HTMLElement {
    const c = el('section', `entry ${cls}`);
    put(c, el('div', 'role', role));
    put(this.root, c);
    return c;
  }

  private textCard(cls: string, role: string, text: string): void {
    put(this.card(cls, role), el('div', 'text', text));
  }

  add(entry: unknown): void {
    if (!isObj(entry)) return;
    this.count++;
    switch (entry.type) {
      case 'message':
        if (isObj(entry.message)) this.message(entry.message);
        return;
      case 'model_change':
        put(this.root, el('p', 'note', `Model changed to ${str(entry.provider)}/${str(entry.modelId)}`));
        return;
      case 'thinking_level_change':
        put(this.root, el('p', 'note', `Thinking level: ${str(entry.thinkingLevel)}`));
        return;
      case 'compaction':
        this.summary('compaction', 'Earlier context was compacted. Summary', str(entry.summary));
        return;
      case 'branch_summary':
        this.summary('branch', 'Summary of another branch', str(entry.summary));
        return;
      case 'custom_message':
        if (entry.display !== false) this.textCard('custom', `${str(entry.customType) || 'extension'} message`, contentText(entry.content));
        return;
      case 'session_info':
        if (str(entry.name)) put(this.root, el('p', 'note', `Session named “${str(entry.name)}”`));
        return;
      default: {
        // Another agent's line (Claude Code's, Codex's), rendered by its adapter; label, custom and unknown types carry nothing to read.
        const parts = renderAgentEntry(entry) ?? renderCodexEntry(entry);
        if (parts && parts.length) this.parts(parts);
        return;
      }
    }
  }

  /** One agent line's parts: text in a card of its role, thinking and tool calls and results collapsed inside it. */
  private parts(parts: RenderedPart[]): void {
    const first = parts[0]!;
    if (first.kind === 'summary') return this.summary('summary', 'Summary', parts.map((p) => p.text).join('\n'));
    // Instructions and context the agent adds itself (Codex's developer messages): there, but closed.
    if (first.kind === 'system' && first.collapsed) return void put(this.root, lazyDetails(`context: ${oneLine(first.text, 100)}`, 'context', parts.map((p) => () => el('div', 'text', p.text))));
    if (first.kind === 'system') return void put(this.root, el('p', 'note', first.text));
    const role = parts.find((p) => p.kind === 'user' || p.kind === 'assistant')?.kind ?? (first.kind === 'tool_result' ? 'tool' : 'assistant');
    const c = this.card(role, role === 'tool' ? 'tool result' : role);
    for (const p of parts) {
      if (p.kind === 'thinking') put(c, lazyDetails(`Thinking (${p.text.length.toLocaleString()} characters)`, 'thinking', [() => el('div', 'text', p.text)]));
      else if (p.kind === 'tool_call') put(c, lazyDetails(oneLine(p.text, 100), 'tool', [() => longPre(p.text)]));
      else if (p.kind === 'tool_result') put(c, lazyDetails(`result ${oneLine(p.text, 80)}`, 'tool', [() => longPre(p.text)]));
      else if (p.collapsed) put(c, lazyDetails(`subagent: ${oneLine(p.text, 100)}`, 'tool', [() => el('div', 'text', p.text)]));
      else put(c, el('div', 'text', p.text));
    }
  }

  private summary(cls: string, title: string, text: string): void {
    const c = this.card(cls, 'summary');
    put(c, lazyDetails(title, 'summary', [() => el('div', 'text', text)]));
  }

  private message(m: Obj): void {
    const role = str(m.role);
    if (role === 'user') {
      const c = this.card('user', 'user');
      const parts = Array.isArray(m.content) ? m.content : [m.content];
      for (const p of parts) {
        if (typeof p === 'string') put(c, el('div', 'text', p));
        else if (isObj(p) && p.type === 'text') put(c, el('div', 'text', str(p.text)));
        else if (isObj(p) && p.type === 'image') put(c, image(p));
      }
    } else if (role === 'assistant') {
      this.assistant(m);
    } else if (role === 'toolResult') {
      this.toolResult(m);
    } else if (role === 'bashExecution') {
      const c = this.card('bash', 'shell');
      const out = str(m.output);
      put(c, lazyDetails(`$ ${oneLine(str(m.command))}  (exit ${String(m.exitCode ?? '?')})`, 'tool', [() => longPre(out)]));
    } else if (role === 'branchSummary' || role === 'compactionSummary') {
      this.summary('summary', role === 'branchSummary' ? 'Summary of another branch' : 'Compaction summary', str(m.summary));
    } else if (role === 'custom') {
      if (m.display !== false) this.textCard('custom', `${str(m.customType) || 'extension'} message`, contentText(m.content));
    } else {
      this.textCard('other', role || 'message', contentText(m.content));
    }
  }

  private assistant(m: Obj): void {
    const c = this.card('assistant', `assistant${str(m.model) ? ` · ${str(m.model)}` : ''}`);
    const parts = Array.isArray(m.content) ? m.content : [];
    for (const p of parts) {
      if (!isObj(p)) continue;
      if (p.type === 'text') put(c, el('div', 'text', str(p.text)));
      else if (p.type === 'thinking') {
        const t = str(p.thinking);
        put(c, lazyDetails(`Thinking (${t.length.toLocaleString()} characters)`, 'thinking', [() => el('div', 'text', t)]));
      } else if (p.type === 'toolCall') {
        const args = p.arguments;
        const name = str(p.name) || 'tool';
        const pending: Array<() => Node> = [() => el('div', 'role', 'arguments'), () => longPre(json(args))];
        const d = lazyDetails(`${name} ${oneLine(json(args).replace(/^\{|\}$/g, ''), 100)}`, 'tool', pending);
        put(c, d);
        if (str(p.id)) this.calls.set(str(p.id), { details: d, pending });
      }
    }
    if (str(m.errorMessage) && m.stopReason !== 'aborted') put(c, el('p', 'note', `Error: ${str(m.errorMessage)}`));
    if (m.stopReason === 'aborted') put(c, el('p', 'note', 'Aborted'));
  }

  private toolResult(m: Obj): void {
    const text = contentText(m.content);
    const images = Array.isArray(m.content) ? m.content.filter((p): p is Obj => isObj(p) && p.type === 'image') : [];
    const build = (): Node[] => [el('div', 'role', m.isError ? 'result (error)' : 'result'), longPre(text), ...images.map(image)];
    const call = this.calls.get(str(m.toolCallId));
    if (call) {
      if (m.isError) call.details.classList.add('error');
      // Rendered when the call is opened (or now, if it already is).
      if (call.details.open) for (const n of build()) put(call.details, n);
      else call.pending.push(() => {
        const f = document.createDocumentFragment();
        put(f, ...build());
        return f;
      });
      return;
    }
    const c = this.card('tool', 'tool result');
    put(c, lazyDetails(`${str(m.toolName) || 'tool'} result`, m.isError ? 'tool error' : 'tool', [() => {
      const f = document.createDocumentFragment();
      put(f, ...build());
      return f;
    }]));
  }
}
