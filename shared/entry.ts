// The session log's line types: header and entries as pi writes them, a fast structural check for reading, zod for appending.
import { z } from 'zod';
import { ENTRY_ID_RE } from './wire.js';

/** Format version this library writes (pi's current version). */
export const CURRENT_VERSION = 3;

/** First line of a session file. Unknown fields (a v1 header's provider/modelId/thinkingLevel, newer writers' fields) are kept. */
export interface SessionHeader {
  type: 'session';
  version?: number;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
  [k: string]: unknown;
}

/** Every line after the header. `type` may be one this library does not know: it is kept and carried unchanged. */
export interface SessionEntry {
  type: string;
  id: string;
  parentId: string | null;
  timestamp: string;
  [k: string]: unknown;
}

export const KNOWN_ENTRY_TYPES = [
  'message',
  'thinking_level_change',
  'model_change',
  'compaction',
  'branch_summary',
  'custom',
  'custom_message',
  'label',
  'session_info',
] as const;
export type KnownEntryType = (typeof KNOWN_ENTRY_TYPES)[number];

/** customType of the `custom` entry that records a checkout: parentId = the entry continued from, so it becomes the leaf. */
export const CHECKOUT_CUSTOM_TYPE = 'sessync.checkout';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Structural check run on every line read. Plain property tests, no zod, no allocation on
 * success (the open-a-100MB-session speed goal depends on it). Checks the fields every entry has
 * and, for known types, the fields the context projection reads. Unknown types and unknown fields
 * pass. Returns null when the entry is usable, else a reason for the problem list.
 */
export function checkEntry(v: unknown): string | null {
  if (!isObject(v)) return 'not a JSON object';
  const type = v.type;
  if (typeof type !== 'string' || type === '') return 'no "type" string';
  if (type === 'session') return 'a second session header';
  if (typeof v.id !== 'string' || v.id === '') return `${type} entry without an "id" string`;
  const parentId = v.parentId;
  if (parentId !== null && (typeof parentId !== 'string' || parentId === '')) {
    return `${type} entry ${v.id}: "parentId" must be an id or null`;
  }
  if (typeof v.timestamp !== 'string') return `${type} entry ${v.id} without a "timestamp" string`;
  return checkKnownFields(type, v);
}

/** Check of a version-1 line (pi's linear format: no id, no parentId). */
export function checkV1Entry(v: unknown): string | null {
  if (!isObject(v)) return 'not a JSON object';
  const type = v.type;
  if (typeof type !== 'string' || type === '') return 'no "type" string';
  if (type === 'session') return 'a second session header';
  return checkKnownFields(type, v);
}

function checkKnownFields(type: string, v: Record<string, unknown>): string | null {
  switch (type) {
    case 'message': {
      const m = v.message;
      if (!isObject(m) || typeof m.role !== 'string') return 'message entry without a "message" object with a "role"';
      return null;
    }
    case 'model_change':
      if (typeof v.provider !== 'string' || typeof v.modelId !== 'string') return 'model_change without "provider" and "modelId" strings';
      return null;
    case 'thinking_level_change':
      if (typeof v.thinkingLevel !== 'string') return 'thinking_level_change without a "thinkingLevel" string';
      return null;
    case 'compaction':
      if (typeof v.summary !== 'string') return 'compaction without a "summary" string';
      // May be absent (a v1 index that named no line migrates to none; pi then keeps nothing before it).
      if (v.firstKeptEntryId !== undefined && typeof v.firstKeptEntryId !== 'string') return 'compaction "firstKeptEntryId" must be a string';
      return null;
    case 'branch_summary':
      if (typeof v.summary !== 'string') return 'branch_summary without a "summary" string';
      return null;
    case 'custom':
      if (typeof v.customType !== 'string') return 'custom entry without a "customType" string';
      return null;
    case 'custom_message':
      if (typeof v.customType !== 'string') return 'custom_message without a "customType" string';
      if (typeof v.content !== 'string' && !Array.isArray(v.content)) return 'custom_message without "content"';
      return null;
    case 'label':
      if (typeof v.targetId !== 'string') return 'label without a "targetId" string';
      return null;
    default:
      return null;
  }
}

/** Check of the first line. Returns null when it is a usable header. */
export function checkHeader(v: unknown): string | null {
  if (!isObject(v)) return 'header is not a JSON object';
  if (v.type !== 'session') return 'first line is not a session header (type "session")';
  if (typeof v.id !== 'string' || v.id === '') return 'session header without an "id" string';
  if (typeof v.timestamp !== 'string') return 'session header without a "timestamp" string';
  if (typeof v.cwd !== 'string') return 'session header without a "cwd" string';
  if (v.version !== undefined && (typeof v.version !== 'number' || !Number.isInteger(v.version) || v.version < 1)) {
    return 'session header "version" must be a positive integer';
  }
  if (v.parentSession !== undefined && typeof v.parentSession !== 'string') return 'session header "parentSession" must be a string';
  return null;
}

// Strict schemas for entries a user appends. id/parentId/timestamp may be absent (the caller fills
// them); unknown extra fields are kept (loose objects) because pi's extensions add their own.
// A new id must be one the sync server accepts (ENTRY_ID_RE), or the session could never be pushed.
// parentId only has to name an existing entry (the caller checks): files read from elsewhere may hold
// older ids this rule would refuse, and a new entry may still continue from them.
const base = {
  id: z
    .string()
    .regex(ENTRY_ID_RE, 'an entry id must start with a letter or digit and hold only letters, digits, _ . : - (at most 128); leave "id" out to get a new one')
    .optional(),
  parentId: z.string().min(1).max(128).nullable().optional(),
  timestamp: z.iso.datetime({ offset: true }).optional(),
};
const textOrImages = z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]);
const blocks = z.array(z.looseObject({ type: z.string() }));

/**
 * The message roles pi reads, each with the fields pi uses when it resumes a session (an assistant message
 * without provider/model leaves pi with the model "undefined/undefined"). Only for appending: reading keeps
 * any role, so files from newer writers still load.
 */
export const MESSAGE_SCHEMAS = {
  user: z.looseObject({ role: z.literal('user'), content: textOrImages }),
  assistant: z.looseObject({ role: z.literal('assistant'), content: blocks, provider: z.string().min(1), model: z.string().min(1) }),
  toolResult: z.looseObject({ role: z.literal('toolResult'), toolCallId: z.string().min(1), toolName: z.string().min(1), content: blocks }),
  bashExecution: z.looseObject({ role: z.literal('bashExecution'), command: z.string(), output: z.string() }),
  custom: z.looseObject({ role: z.literal('custom'), customType: z.string().min(1), content: textOrImages }),
  branchSummary: z.looseObject({ role: z.literal('branchSummary'), summary: z.string(), fromId: z.string().min(1) }),
  compactionSummary: z.looseObject({ role: z.literal('compactionSummary'), summary: z.string() }),
} as const;
export type MessageRole = keyof typeof MESSAGE_SCHEMAS;
const MESSAGE_ROLES = Object.keys(MESSAGE_SCHEMAS) as MessageRole[];

const message = z.looseObject({ role: z.string().min(1) }).superRefine((m, ctx) => {
  const role = m.role;
  if (!(MESSAGE_ROLES as string[]).includes(role)) {
    ctx.addIssue({ code: 'custom', path: ['role'], message: `unknown message role "${role}" (pi reads: ${MESSAGE_ROLES.join(', ')})` });
    return;
  }
  const r = MESSAGE_SCHEMAS[role as MessageRole].safeParse(m);
  for (const issue of r.success ? [] : r.error.issues) {
    const article = /^[aeiou]/i.test(role) ? 'an' : 'a';
    ctx.addIssue({ code: 'custom', path: issue.path, message: `${issue.message} (${article} ${role} message needs ${requiredOf(role as MessageRole)})` });
  }
});

function requiredOf(role: MessageRole): string {
  return Object.keys(MESSAGE_SCHEMAS[role].shape).filter((k) => k !== 'role').map((k) => `"${k}"`).join(', ');
}

export const ENTRY_SCHEMAS: Record<KnownEntryType, z.ZodType<Record<string, unknown>>> = {
  message: z.looseObject({ ...base, type: z.literal('message'), message }),
  thinking_level_change: z.looseObject({ ...base, type: z.literal('thinking_level_change'), thinkingLevel: z.string().min(1) }),
  model_change: z.looseObject({ ...base, type: z.literal('model_change'), provider: z.string().min(1), modelId: z.string().min(1) }),
  compaction: z.looseObject({
    ...base,
    type: z.literal('compaction'),
    summary: z.string(),
    firstKeptEntryId: z.string().min(1),
    tokensBefore: z.number().nonnegative().optional(),
  }),
  branch_summary: z.looseObject({ ...base, type: z.literal('branch_summary'), fromId: z.string().min(1), summary: z.string() }),
  custom: z.looseObject({ ...base, type: z.literal('custom'), customType: z.string().min(1), data: z.unknown().optional() }),
  custom_message: z.looseObject({
    ...base,
    type: z.literal('custom_message'),
    customType: z.string().min(1),
    content: textOrImages,
    display: z.boolean(),
  }),
  label: z.looseObject({ ...base, type: z.literal('label'), targetId: z.string().min(1), label: z.string().optional() }),
  session_info: z.looseObject({ ...base, type: z.literal('session_info'), name: z.string().optional() }),
};

export function isKnownEntryType(type: string): type is KnownEntryType {
  return (KNOWN_ENTRY_TYPES as readonly string[]).includes(type);
}

/** Strict check of an entry a user appends: a known type with its required fields. */
export function validateNewEntry(
  v: unknown,
): { ok: true; entry: Record<string, unknown> } | { ok: false; reason: string } {
  if (!isObject(v)) return { ok: false, reason: 'an entry must be a JSON object' };
  const type = v.type;
  if (typeof type !== 'string') return { ok: false, reason: 'an entry needs a "type" string' };
  if (type === 'session') return { ok: false, reason: 'a session header cannot be appended as an entry' };
  if (!isKnownEntryType(type)) {
    return { ok: false, reason: `unknown entry type "${type}" (known: ${KNOWN_ENTRY_TYPES.join(', ')})` };
  }
  const r = ENTRY_SCHEMAS[type].safeParse(v);
  if (r.success) return { ok: true, entry: v };
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? `"${issue.path.join('.')}": ` : '';
  return { ok: false, reason: `${type} entry: ${where}${issue?.message ?? 'invalid'}` };
}
