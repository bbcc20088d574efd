// Every request and response that crosses the wire, named after its route, validated with zod on both sides.
import { z } from 'zod';

export const API_VERSION = 1;
export const SERVICE_NAME = 'sessync';

/** Limits that keep every request inside Workers limits (100 MB body, 128 MB memory, 50 subrequests). */
export const LIMITS = {
  /** Bytes of one push request body. */
  maxRequestBytes: 10 * 1024 * 1024,
  /** Batches in one POST /v1/batches (their bodies together within maxRequestBytes). */
  maxBatchesPerPush: 256,
  /** Bytes of one batch body (JSONL of entries, or ciphertext). */
  maxBatchBytes: 8 * 1024 * 1024,
  /** Entries in one batch. */
  maxEntriesPerBatch: 5_000,
  /** Bytes of one entry line. */
  maxEntryBytes: 4 * 1024 * 1024,
  /** Sessions in one POST /v1/pulls (their pages together within maxPullBytes). */
  maxSessionsPerPull: 64,
  /** Batches in one pull response. */
  maxBatchesPerPull: 40,
  /** Bytes of batch bodies in one pull response (the last batch may cross it once). */
  maxPullBytes: 8 * 1024 * 1024,
  /** Heads in one changes page. */
  maxHeadsPerPage: 5_000,
  /** Bytes of one share's ciphertext. */
  maxShareBytes: 25 * 1024 * 1024,
  /**
   * Nesting of one entry line and of `meta.header` (the line's own object is level 1). Real entries
   * nest fewer than 15; the cap keeps every reader's walk of stored content shallow.
   */
  maxJsonDepth: 64,
  /**
   * Nesting of any request body: an entry-sized value plus the request around it
   * (`{meta: {header: ...}}`), so the request limit never hides the per-value one.
   */
  maxRequestJsonDepth: 64 + 2,
  /**
   * Bytes of `meta.header` as JSON. Pulled, it becomes a session file's first line with the local
   * cwd in it, and `list` reads only the first 4 KiB of a file: 2 KiB leaves room for any cwd.
   */
  maxHeaderBytes: 2 * 1024,
  /** Hosts in one pull cursor. */
  maxCursorHosts: 10_000,
  /** Hosts that push to one session (each is a head every pull and meta read lists). */
  maxHostsPerSession: 1_000,
  /** Base64 characters of a sealed meta's ciphertext: the header (2 KiB), name and agent, sealed, with room to spare. */
  maxSealedMetaChars: 16 * 1024,
  /** Base64 characters of a wrapped session key (AES-KW: 40 bytes; AES-GCM with its nonce: 60 bytes). */
  maxWrappedKeyChars: 512,
} as const;

/** Session ids, host ids, account ids: nothing that can steer an object key. */
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** Entry ids: UUIDv7 written by sessync, pi's 8-hex legacy ids, anything similar. */
export const ENTRY_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export const SessionIdSchema = z.string().regex(NAME_RE, 'session id: letters, digits, - and _ only, at most 128');
export const HostIdSchema = z.string().regex(NAME_RE, 'host id: letters, digits, - and _ only, at most 128');
export const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, 'sha256: 64 lowercase hex digits');
/**
 * Standard base64 with padding (what a wrapped key and a sealed meta are), by one walk over the characters: a
 * pattern with a repeated group overflows the regex engine's stack on a multi-megabyte string (a 500, not a 400).
 */
export function isBase64(s: string): boolean {
  if (s.length % 4 !== 0) return false;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  for (let i = 0; i < s.length - pad; i++) {
    const c = s.charCodeAt(i);
    // A-Z, a-z, 0-9, + and /
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47)) return false;
  }
  return true;
}
/** An account key's id: chosen by the client (e.g. 16 random hex digits), never secret. */
export const KeyIdSchema = z.string().regex(NAME_RE, 'keyId: letters, digits, - and _ only, at most 128');

/** Error body of every non-2xx answer. */
export const ErrorBodySchema = z.object({
  /** `details`: facts a client can act on (e.g. the cap of POST /v1/batches), when the error has any. */
  error: z.object({ code: z.string(), message: z.string(), retryable: z.boolean().optional(), details: z.unknown().optional() }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** GET /v1/health (no auth): lets a client tell a sessync server from anything else. */
export const HealthResponseSchema = z.object({
  service: z.literal(SERVICE_NAME),
  api: z.number().int(),
});
export type HealthResponse = z.infer<typeof HealthResponseSchema>;

/** GET /v1/whoami */
export const WhoamiResponseSchema = z.object({ account: z.string() });
export type WhoamiResponse = z.infer<typeof WhoamiResponseSchema>;

/** POST /v1/admin/accounts (Authorization: Bearer <admin secret>) */
export const CreateAccountRequestSchema = z.object({ name: z.string().max(200).optional() }).strict();
export const CreateAccountResponseSchema = z.object({ account: z.string(), token: z.string() });
export type CreateAccountResponse = z.infer<typeof CreateAccountResponseSchema>;

/** POST /v1/admin/accounts/:account/tokens (admin): another token for an existing account. */
export const CreateTokenResponseSchema = z.object({ account: z.string(), token: z.string() });

/**
 * The plaintext envelope around a batch body. The server reads only the envelope; the body
 * is JSONL of entries (`encoding: "jsonl"`, validated line by line) or opaque ciphertext
 * (`encoding: "aes-256-gcm"`, nonce ‖ ciphertext ‖ tag, not validated).
 * `sha256` is of the body's bytes as they travel: a frame (shared/batch-frames.ts) carries JSONL as its UTF-8 and
 * ciphertext raw, so it is the SHA-256 of the UTF-8 or of the raw sealed bytes. A JSON request carries the body as a
 * string (ciphertext as base64 text: clients from before frames) and `sha256` is then of that string's UTF-8; the
 * server keeps what it was sent, so a batch stored that way keeps the sha-256 of its base64 text.
 */
export const BatchEnvelopeSchema = z.object({
  session: SessionIdSchema,
  host: HostIdSchema,
  // 12 digits: keys.ts pads seqs to a fixed width so that listing order is numeric order.
  seq: z.number().int().min(1).max(999_999_999_999),
  batchId: z.string().regex(NAME_RE, 'batchId: letters, digits, - and _ only'),
  // 0 only for a session's announcement: its first batch when the session has only a header so far.
  entryCount: z.number().int().min(0).max(LIMITS.maxEntriesPerBatch),
  sha256: Sha256HexSchema,
  encoding: z.enum(['jsonl', 'aes-256-gcm']),
}).strict();
export type BatchEnvelope = z.infer<typeof BatchEnvelopeSchema>;

/** What the client says about the session on its first push (kept as first pushed). */
export const SessionMetaInputSchema = z.object({
  /** The header line as the pushing machine has it (cwd is that machine's). */
  header: z.record(z.string(), z.unknown()),
  /** Identifies the project across machines (git remote, root commit, or path). */
  projectKey: z.string().min(1).max(1000),
  name: z.string().max(1000).optional(),
}).strict();
export type SessionMetaInput = z.infer<typeof SessionMetaInputSchema>;

/**
 * The sealed part of an encrypted session's meta, stored as pushed; the server reads nothing inside it.
 * `wrappedKey`: the session's data key wrapped under the account key `keyId` (base64). `ciphertext`: base64 of
 * nonce ‖ AES-256-GCM of the JSON `{ header, name?, agent? }` under the session key.
 */
export const SealedMetaSchema = z.object({
  keyId: KeyIdSchema,
  wrappedKey: z.string().min(1).max(LIMITS.maxWrappedKeyChars).refine(isBase64, 'sealed.wrappedKey: base64'),
  ciphertext: z.string().min(1).max(LIMITS.maxSealedMetaChars).refine(isBase64, 'sealed.ciphertext: base64'),
}).strict();
export type SealedMeta = z.infer<typeof SealedMetaSchema>;

/**
 * An encrypted account's session meta (push `meta`, and the body of PUT /v1/sessions/:session/meta/seal).
 * `projectKey`: 64 lowercase hex, an HMAC-SHA-256 of the plaintext project key under a key derived from the
 * account key, so machines of the account still group a project's sessions and the server learns nothing.
 */
export const SealedSessionMetaInputSchema = z.object({
  projectKey: Sha256HexSchema,
  sealed: SealedMetaSchema,
}).strict();
export type SealedSessionMetaInput = z.infer<typeof SealedSessionMetaInputSchema>;

export type AnySessionMetaInput = SessionMetaInput | SealedSessionMetaInput;

/**
 * Either meta a push can carry; which one an account accepts depends on whether it is encrypted. A union picked by
 * the presence of `sealed` rather than a plain z.union, so a bad meta's error names its own field
 * (`meta.header: expected record`), not "Invalid input" for the union as a whole.
 */
export const AnySessionMetaInputSchema = z.unknown().transform((value, ctx): AnySessionMetaInput => {
  const sealed = typeof value === 'object' && value !== null && 'sealed' in value;
  const r = (sealed ? SealedSessionMetaInputSchema : SessionMetaInputSchema).safeParse(value);
  if (r.success) return r.data;
  for (const issue of r.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
});

export function isSealedMetaInput(meta: AnySessionMetaInput): meta is SealedSessionMetaInput {
  return 'sealed' in meta;
}

/**
 * POST /v1/sessions/:session/batches. `meta` is plaintext (`SessionMetaInput`) on a plaintext account and
 * sealed (`SealedSessionMetaInput`) on an encrypted one; the server refuses the other kind.
 */
export const PushBatchRequestSchema = z.object({
  envelope: BatchEnvelopeSchema,
  body: z.string().max(LIMITS.maxBatchBytes),
  meta: AnySessionMetaInputSchema.optional(),
}).strict();
export type PushBatchRequest = z.infer<typeof PushBatchRequestSchema>;

/**
 * The header of one push frame (POST /v1/batches and POST /v1/sessions/:session/batches with Content-Type
 * FRAMES_TYPE): a PushBatchRequest without `body`, plus the frame's `bytes`; the frame's bytes are the body, JSONL as
 * UTF-8 or the raw sealed bytes (never base64). Frames of one request are items of one POST /v1/batches, in order.
 */
export const PushFrameHeaderSchema = z.object({
  envelope: BatchEnvelopeSchema,
  meta: AnySessionMetaInputSchema.optional(),
  bytes: z.number().int().min(0),
}).strict();
export type PushFrameHeader = z.infer<typeof PushFrameHeaderSchema>;

/**
 * A push as a client holds it before it is sent (frames or JSON): `body` is the JSONL text, or for aes-256-gcm the
 * raw sealed bytes with `envelope.sha256` of them; a string aes-256-gcm body is base64 text (a batch written down by
 * an older client) with `envelope.sha256` of that text.
 */
export type PushBatchItem = Omit<PushBatchRequest, 'body'> & { body: string | Uint8Array };

/**
 * `created`: stored now; `exists`: the identical batch was already stored (a retry). A different batch at that seq is 409 conflict.
 * `metaMismatch`: the push carried a sealed meta whose wrappedKey differs from the stored one (the session was made
 * elsewhere under another data key). Only an empty batch is answered so (stored as usual, the stored meta kept as
 * first pushed; a batch of entries is refused before any write, 409 conflict with `details.metaMismatch`): the client
 * re-reads the meta, unwraps the stored key and encrypts its batches under it.
 */
export const PushBatchResponseSchema = z.object({
  status: z.enum(['created', 'exists']),
  session: z.string(),
  host: z.string(),
  seq: z.number().int(),
  metaMismatch: z.literal(true).optional(),
});
export type PushBatchResponse = z.infer<typeof PushBatchResponseSchema>;

/**
 * POST /v1/batches: the batches of several sessions in one request (at most one per session), each handled
 * exactly as POST /v1/sessions/:session/batches would (the session is the envelope's). Every batch is checked
 * before the first write; one refused batch does not fail the others. Items are parsed one by one, so a
 * malformed item is that item's error.
 */
export const PushBatchesRequestSchema = z.object({
  batches: z.array(z.unknown()).min(1).max(LIMITS.maxBatchesPerPush),
}).strict();
export type PushBatchesRequest = { batches: PushBatchRequest[] };

/** One item's outcome, in request order: the single route's answer, or the error it would have answered. */
export const PushBatchesItemSchema = z.union([
  PushBatchResponseSchema.extend({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), error: ErrorBodySchema.shape.error }),
]);
export type PushBatchesItem = z.infer<typeof PushBatchesItemSchema>;

export const PushBatchesResponseSchema = z.object({ results: z.array(PushBatchesItemSchema) });
export type PushBatchesResponse = z.infer<typeof PushBatchesResponseSchema>;

/** Per-host pull cursor: the last seq the client holds from each host (absent = none). */
export const CursorSchema = z
  .record(HostIdSchema, z.number().int().min(0))
  .refine((c) => Object.keys(c).length <= LIMITS.maxCursorHosts, `a cursor names at most ${LIMITS.maxCursorHosts} hosts`);
export type Cursor = z.infer<typeof CursorSchema>;

/**
 * POST /v1/sessions/:session/pull. `withMeta`: answer the session's meta too (`meta` in the response), as
 * GET /v1/sessions/:session would: a client creating the session here needs it, and it spares a request per session.
 * An older server refuses the key (400, strict schema); a client then asks without it and GETs the meta.
 */
export const PullRequestSchema = z.object({ cursor: CursorSchema, withMeta: z.literal(true).optional() }).strict();
export type PullRequest = z.infer<typeof PullRequestSchema>;

/**
 * A batch as the server stores it. `received`: when the server first stored it (its clock, ms since the epoch), set
 * once by the write that created it and never by a retry; records stored before the field existed have none. It is
 * the order the server vouches for (the Codex fork rule's "first on the server").
 */
export const StoredBatchSchema = z.object({ envelope: BatchEnvelopeSchema, body: z.string(), received: z.number().int().nonnegative().optional() });
export type StoredBatch = z.infer<typeof StoredBatchSchema>;

/**
 * A batch as a pull serves it. `damaged`: the stored object does not parse (an older server wrote it); its envelope
 * then names only host and seq, with an empty body and a sha-256 that does not match it, so a client that does not
 * know the field still skips it as damaged. `received` is the stored record's (absent for a damaged or older one).
 */
export const PulledBatchSchema = StoredBatchSchema.extend({ damaged: z.string().max(300).optional() });
export type PulledBatch = z.infer<typeof PulledBatchSchema>;

/**
 * Batches after the cursor, ordered by host then seq; `more` says call again with `cursor`. `meta`: asked for by
 * `withMeta`, and absent when the server cannot serve it (no meta yet, a deleted session, a damaged one): the
 * client then asks GET /v1/sessions/:session, whose answer says why.
 */
export const PullResponseSchema = z.object({
  batches: z.array(PulledBatchSchema),
  cursor: CursorSchema,
  more: z.boolean(),
  meta: z.lazy(() => SessionMetaResponseSchema).optional(),
});
export type PullResponse = z.infer<typeof PullResponseSchema>;

/**
 * POST /v1/pulls: a page of several sessions in one request (at most one entry per session), each as
 * POST /v1/sessions/:session/pull would answer it, within one request's LIMITS.maxPullBytes together: once they are
 * spent, the sessions after get no batches and `more: true` (ask again). Per-session errors (404) in their item.
 */
export const PullManyRequestSchema = z.object({
  sessions: z.array(z.object({ session: SessionIdSchema, cursor: CursorSchema, withMeta: z.literal(true).optional() }).strict()).min(1).max(LIMITS.maxSessionsPerPull),
}).strict();
export type PullManyRequest = z.infer<typeof PullManyRequestSchema>;

export const PullManyItemSchema = z.union([
  PullResponseSchema.extend({ ok: z.literal(true), session: z.string() }),
  z.object({ ok: z.literal(false), session: z.string(), error: ErrorBodySchema.shape.error }),
]);
export type PullManyItem = z.infer<typeof PullManyItemSchema>;
export const PullManyResponseSchema = z.object({ results: z.array(PullManyItemSchema) });
export type PullManyResponse = z.infer<typeof PullManyResponseSchema>;

/**
 * A frames answer to POST /v1/pulls or POST /v1/sessions/:session/pull, for a request whose Accept names FRAMES_TYPE
 * (shared/batch-frames.ts); a server from before frames answers JSON and the client reads by Content-Type. Per session,
 * in request order: one frame per pulled batch, then one header-only frame (bytes 0) that ends the session.
 * - A batch frame's header is PullBatchFrameHeader: the PulledBatch without `body` (every other field of the stored
 *   record passed through, such as `received`), plus `session`; its bytes are the body: JSONL as UTF-8, ciphertext raw
 *   (nonce, ciphertext, tag), never base64, except a sealed batch an older client pushed as base64 text, served as
 *   stored with `base64: true`. `envelope.sha256` is of the frame's bytes in every case.
 * - The end frame's header is the POST /v1/pulls item without `batches` (PullEndFrameHeader): `ok`, `cursor`, `more`
 *   and `meta`, or `ok: false` and the session's `error`. A batch frame has `envelope`; an end frame never does.
 * A client refuses a whole answer that breaks this (a session's batches without its end frame, sessions out of
 * order, a cut body) before anything of it is written.
 */
export const PullBatchFrameHeaderSchema = PulledBatchSchema.omit({ body: true }).extend({
  session: SessionIdSchema,
  base64: z.literal(true).optional(),
});
export type PullBatchFrameHeader = z.infer<typeof PullBatchFrameHeaderSchema>;
export const PullEndFrameHeaderSchema = z.union([
  PullResponseSchema.omit({ batches: true }).extend({ ok: z.literal(true), session: z.string() }),
  z.object({ ok: z.literal(false), session: z.string(), error: ErrorBodySchema.shape.error }),
]);

/**
 * A pulled batch as the client holds it: from a JSON answer the body is a string (ciphertext as base64 text), from
 * frames the bytes (ciphertext raw, or base64 text where `base64`).
 */
export type PulledBatchIn = Omit<PulledBatch, 'body'> & { body: string | Uint8Array; base64?: true };
export type PullPage = Omit<PullResponse, 'batches'> & { batches: PulledBatchIn[] };
export type PullPageItem = (Omit<Extract<PullManyItem, { ok: true }>, 'batches'> & { batches: PulledBatchIn[] }) | Extract<PullManyItem, { ok: false }>;

/** One (session, host) and the highest seq stored from that host. */
export const HeadSchema = z.object({ session: z.string(), host: z.string(), seq: z.number().int() });
export type Head = z.infer<typeof HeadSchema>;

/**
 * GET /v1/changes?page=TOKEN: the heads of every session of the account, one page at a time.
 * A client compares them with its per-host cursors: a no-op sync of 1,000 sessions is one request.
 */
export const ChangesResponseSchema = z.object({
  heads: z.array(HeadSchema),
  nextPage: z.string().optional(),
  /** Sessions deleted on the server (their heads are not listed): a client stops pushing them. On every page. */
  deleted: z.lazy(() => z.array(TombstoneSchema)).optional(),
});
export type ChangesResponse = z.infer<typeof ChangesResponseSchema>;

/**
 * GET /v1/sessions/:session: metadata as first pushed. A sealed session has `sealed` (as stored, re-wrapped on
 * rotation) and no `header`, `cwd` or `name`; `created` is then the time of the first push.
 */
export const SessionMetaResponseSchema = z.object({
  session: z.string(),
  header: z.record(z.string(), z.unknown()).optional(),
  sealed: SealedMetaSchema.optional(),
  projectKey: z.string(),
  cwd: z.string().optional(),
  name: z.string().optional(),
  created: z.string(),
  hosts: z.record(z.string(), z.number().int()),
});
export type SessionMetaResponse = z.infer<typeof SessionMetaResponseSchema>;

/**
 * PUT /v1/sessions/:session/key -> SessionMetaResponse: re-wraps the session key under the account key `keyId` on
 * rotation. `replaces` must be the stored keyId (else 409 key_mismatch); a session already under `keyId` with the
 * same wrappedKey answers 200 unchanged, so a re-run of an interrupted rotation is idempotent.
 */
export const PutSessionKeyRequestSchema = z.object({
  keyId: KeyIdSchema,
  wrappedKey: SealedMetaSchema.shape.wrappedKey,
  replaces: KeyIdSchema,
}).strict();
export type PutSessionKeyRequest = z.infer<typeof PutSessionKeyRequestSchema>;

/**
 * PUT /v1/sessions/:session/batches/:host/:seq/seal: replaces a stored `jsonl` batch by its ciphertext in place
 * (conversion of a plaintext account). `envelope` equals the stored one except `encoding: "aes-256-gcm"` and the
 * `sha256` of the new body. 200 `sealed` (replaced now) or `exists` (already sealed with this sha256); else 409.
 */
export const SealBatchRequestSchema = z.object({
  envelope: BatchEnvelopeSchema,
  body: z.string().max(LIMITS.maxBatchBytes),
}).strict();
export type SealBatchRequest = z.infer<typeof SealBatchRequestSchema>;
export const SealBatchResponseSchema = z.object({
  status: z.enum(['sealed', 'exists']),
  session: z.string(),
  host: z.string(),
  seq: z.number().int(),
});
export type SealBatchResponse = z.infer<typeof SealBatchResponseSchema>;

/**
 * PUT /v1/sessions/:session/meta/seal: body SealedSessionMetaInputSchema, replaces a plaintext meta in place ->
 * SessionMetaResponse. 200 also when already sealed identically (a re-run); sealed differently: 409.
 */
export const SealMetaRequestSchema = SealedSessionMetaInputSchema;

/** A retired account key: sessions may still name it until they are re-wrapped. */
export const RetiredKeySchema = z.object({ keyId: z.string(), retiredAt: z.string() });

/**
 * GET /v1/account/key (and the answer of PUT). `check`: base64url of an HMAC of a fixed label under a key derived
 * from the account key, so a client proves it holds the right key before it writes or sends anything.
 */
export const AccountKeyResponseSchema = z.discriminatedUnion('encrypted', [
  z.object({ encrypted: z.literal(false) }),
  z.object({
    encrypted: z.literal(true),
    keyId: z.string(),
    check: z.string(),
    created: z.string(),
    retired: z.array(RetiredKeySchema),
    /** Stored objects of the account still in plaintext, when the server can count them cheaply. */
    plaintextLeft: z.number().int().min(0).optional(),
  }),
]);
export type AccountKeyResponse = z.infer<typeof AccountKeyResponseSchema>;

/**
 * PUT /v1/account/key. No record and no `replaces`: the account becomes encrypted (irreversible). `replaces` equal to
 * the current keyId: rotation (the old one moves to `retired`). Anything else: 409 key_mismatch.
 */
export const PutAccountKeyRequestSchema = z.object({
  keyId: KeyIdSchema,
  check: z.string().min(1).max(256).regex(/^[A-Za-z0-9_-]+={0,2}$/, 'check: base64url'),
  replaces: KeyIdSchema.optional(),
}).strict();
export type PutAccountKeyRequest = z.infer<typeof PutAccountKeyRequestSchema>;

/** POST /v1/shares: ciphertext of the shared branch; the key never leaves the client. */
export const CreateShareRequestSchema = z.object({
  ciphertext: z.string().min(1).max(LIMITS.maxShareBytes),
  /** ISO time after which the share answers 410. */
  expiresAt: z.string().datetime(),
  session: SessionIdSchema.optional(),
  entryId: z.string().regex(ENTRY_ID_RE).optional(),
  entryCount: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
}).strict();
export type CreateShareRequest = z.infer<typeof CreateShareRequestSchema>;

/** The token is returned once; the server keeps only its SHA-256. `id` names the share in lists and revocation. */
export const CreateShareResponseSchema = z.object({ token: z.string(), id: z.string(), url: z.string(), expiresAt: z.string() });
export type CreateShareResponse = z.infer<typeof CreateShareResponseSchema>;

export const ShareInfoSchema = z.object({
  id: z.string(),
  session: z.string().optional(),
  entryId: z.string().optional(),
  entryCount: z.number().int().optional(),
  created: z.string(),
  expiresAt: z.string(),
  revoked: z.boolean(),
});
export type ShareInfo = z.infer<typeof ShareInfoSchema>;

/**
 * A share whose index entry is damaged: its id (from the entry's key), and what its share record says when the
 * server could still reach it (then `DELETE /v1/shares/:id` revokes it); `message` says what its owner can do.
 */
export const DamagedShareInfoSchema = z.object({
  id: z.string(),
  created: z.string().optional(),
  expiresAt: z.string().optional(),
  revoked: z.boolean().optional(),
  revocableById: z.boolean(),
  message: z.string(),
});
export type DamagedShareInfo = z.infer<typeof DamagedShareInfoSchema>;

/**
 * GET /v1/shares?page=TOKEN: one page of the account's shares (each costs the server one read, so a
 * page stays inside the Workers subrequest limit); `nextPage` says call again with ?page=nextPage.
 */
export const ListSharesResponseSchema = z.object({
  shares: z.array(ShareInfoSchema),
  /** Shares whose index entry is damaged, apart from `shares` (whose fields they may lack; older clients skip them). */
  damaged: z.array(DamagedShareInfoSchema).optional(),
  nextPage: z.string().optional(),
});

/** GET /v1/shares/:token/blob (no auth: the token is the capability) */
export const ShareBlobResponseSchema = z.object({
  ciphertext: z.string(),
  expiresAt: z.string(),
  /** The share's id (not the token): `sessync import` names it in the new session's header. */
  id: z.string().optional(),
});
export type ShareBlobResponse = z.infer<typeof ShareBlobResponseSchema>;

/** DELETE /v1/shares/:idOrToken -> 200 { revoked: true } */
export const RevokeShareResponseSchema = z.object({ revoked: z.literal(true), id: z.string() });

/** A deleted session: who asked and when. Kept after its objects are gone, so every machine learns of it. */
export const TombstoneSchema = z.object({
  session: z.string(),
  deletedAt: z.string(),
  /** Host id of the machine that asked for the deletion. */
  host: z.string(),
});
export type Tombstone = z.infer<typeof TombstoneSchema>;

/** DELETE /v1/sessions/:session with body { host }: one bounded step of the deletion; call again while `complete` is false. */
export const DeleteSessionRequestSchema = z.object({ host: HostIdSchema }).strict();
/** A share of a deleted session the server could not revoke (its records are damaged), and what its owner can do. */
export const UnrevokedShareSchema = z.object({ id: z.string(), message: z.string() });
export type UnrevokedShare = z.infer<typeof UnrevokedShareSchema>;

export const DeleteSessionResponseSchema = z.object({
  session: z.string(),
  deletedAt: z.string(),
  host: z.string(),
  /** Every object of the session is gone (the tombstone stays). */
  complete: z.boolean(),
  /**
   * Objects of the session removed by this call: its meta, batches and heads, and the pointers of the shares it could
   * not revoke (not those of the shares it revoked, counted in `sharesRevoked`).
   */
  removed: z.number().int(),
  /** Shares of the session revoked by this call. */
  sharesRevoked: z.number().int(),
  /** Shares this call could not revoke (their records are damaged; their pointers are counted in `removed`); absent when none. */
  sharesNotRevoked: z.array(UnrevokedShareSchema).optional(),
  /**
   * Every share of the session a deletion could not revoke and that is not revoked since, on every answer (a retry's,
   * a later call's), so a lost answer loses no warning; absent when none, and from older servers. It repeats the shares
   * of `sharesNotRevoked` and of earlier answers: a client names each once, by id.
   */
  sharesStillUnrevoked: z.array(UnrevokedShareSchema).optional(),
});
export type DeleteSessionResponse = z.infer<typeof DeleteSessionResponseSchema>;

/** POST /v1/sessions/:session/undelete: drops the tombstone of a fully deleted session so it can be pushed again. */
export const UndeleteSessionResponseSchema = z.object({ session: z.string(), undeleted: z.boolean() });

/** One token of the account as listed: never the secret. `lastUsed` is a day (YYYY-MM-DD). */
export const TokenInfoSchema = z.object({
  id: z.string(),
  name: z.string().optional(),
  created: z.string(),
  lastUsed: z.string().optional(),
  /** The token this request was made with. */
  current: z.boolean(),
});
export type TokenInfo = z.infer<typeof TokenInfoSchema>;

/** GET /v1/tokens (and GET /v1/admin/accounts/:account/tokens) */
export const ListTokensResponseSchema = z.object({ tokens: z.array(TokenInfoSchema) });

export const TOKEN_NAME_MAX = 100;
/** POST /v1/tokens (own token) and POST /v1/admin/accounts/:account/tokens (admin): an optional name. */
export const CreateTokenRequestSchema = z.object({ name: z.string().min(1).max(TOKEN_NAME_MAX).optional() }).strict();

/** The secret is answered once, here; the server keeps only its SHA-256. */
export const CreateOwnTokenResponseSchema = z.object({
  account: z.string(),
  id: z.string(),
  name: z.string().optional(),
  created: z.string(),
  token: z.string(),
});
export type CreateOwnTokenResponse = z.infer<typeof CreateOwnTokenResponseSchema>;

/** DELETE /v1/tokens/:id (`current` = the token making the request) and DELETE /v1/admin/accounts/:account/tokens/:id */
export const RevokeTokenResponseSchema = z.object({ revoked: z.literal(true), id: z.string() });

/** PUT /v1/admin/accounts/:account/quota (admin): limits for one account; both absent = no quota. */
export const QuotaSchema = z.object({
  maxBytes: z.number().int().min(0).optional(),
  maxSessions: z.number().int().min(0).optional(),
}).strict();
export type Quota = z.infer<typeof QuotaSchema>;

/** GET/PUT /v1/admin/accounts/:account/quota answer: the limits and what the account uses now. */
export const QuotaResponseSchema = z.object({
  account: z.string(),
  quota: QuotaSchema,
  usage: z.object({ bytes: z.number().int(), sessions: z.number().int() }),
});
export type QuotaResponse = z.infer<typeof QuotaResponseSchema>;
