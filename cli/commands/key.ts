// `sessync key export|import|status|rotate|init`: the account's end-to-end encryption key on this machine.
import { readFile } from 'node:fs/promises';
import type { Command, CommandContext } from '../command.js';
import { SessyncError } from '../../shared/errors.js';
import { LOSS_WARNING, exportKey, importKey, keyScope, keyStatus } from '../keys/key-actions.js';
import { rotateKey } from '../keys/key-rotate.js';
import { convertAccount } from '../keys/key-convert.js';
import { openSync, withSyncLock } from '../sync/sync-run.js';

const USAGE = 'export | import [--file F] | status | rotate | init';

async function readAll(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) text += String(chunk);
  return text;
}

/** The export string shown once: stderr for a human (stdout stays for the result), the result itself with --json. */
function showOnce(ctx: CommandContext, exported: string): void {
  ctx.info(`${exported}\nwarning: ${LOSS_WARNING}; import it on your other machines with \`sessync key import\``);
}

const command: Command = {
  summary: 'The end-to-end encryption key of the account: export it, import it on another machine, check it (status), rotate it, or encrypt a plaintext account (init).',
  usage: USAGE,
  usesSessions: 'none',
  help: [
    'export          prints this machine\'s key (an export string, "sessync-key-1...") on stdout: keep it safe.',
    'import          reads an export string from stdin (or --file F), checks it against the server\'s key check, saves it (0600).',
    'status          says whether the account is encrypted, whether this machine has the key, and whether it matches the server.',
    'rotate          makes a new account key and re-wraps every session\'s key under it (batches stay as they are); other',
    '                machines are then told to import the new key. Re-running it after an interruption finishes it.',
    'init            encrypts a plaintext account in place: a new key, then every stored batch and meta sealed; re-run it',
    '                after an interruption to finish. New accounts are encrypted at their first `sessync login` already.',
    'Losing every copy of the key loses the synced sessions: the server cannot read them.',
  ].join('\n'),
  options: { file: { type: 'string' } },
  async run(ctx) {
    const [verb, ...rest] = ctx.args;
    if (!verb || rest.length) throw new SessyncError('bad_input', `usage: sessync key ${USAGE}`);
    if (typeof ctx.opts.file === 'string' && verb !== 'import') throw new SessyncError('bad_input', '--file goes with `sessync key import` only');
    const s = await keyScope(ctx.env);
    if (verb === 'export') {
      const exported = await exportKey(s);
      ctx.print(exported, { account: s.account, key: exported });
      return;
    }
    if (verb === 'import') {
      const text = typeof ctx.opts.file === 'string'
        ? await readFile(ctx.opts.file, 'utf8').catch((e: Error) => {
          throw new SessyncError('bad_input', `cannot read ${ctx.opts.file}: ${e.message}`);
        })
        : await readAll(ctx.stdin);
      if (!text.trim()) throw new SessyncError('bad_input', 'no key given: pipe the export string in (`sessync key import < key.txt`) or use --file F');
      const r = await importKey(s, text);
      ctx.print(`imported key ${r.key.keyId} for account ${s.account} (saved in ${r.path}); push and pull now work here`, { account: s.account, keyId: r.key.keyId, path: r.path });
      return;
    }
    if (verb === 'status') {
      const st = await keyStatus(s);
      const head = !st.encrypted
        ? `account ${st.account}: not end-to-end encrypted`
        : `account ${st.account}: end-to-end encrypted with key ${st.keyId}; this machine ${st.localKeyId ? `holds key ${st.localKeyId}, which ${st.matches ? 'matches the server' : 'does not match'}` : 'has no key'}`;
      ctx.print(st.advice ? `${head}\n${st.advice}` : head, st);
      return st.encrypted && !st.matches ? 1 : 0;
    }
    if (verb === 'rotate') {
      const r = await rotateKey(s, (t) => ctx.info(t));
      if (!ctx.json) showOnce(ctx, r.exported);
      const left = r.left.length ? `; ${r.left.length} session(s) not re-wrapped (run it again on a machine that holds their key)` : '';
      ctx.print(`rotated the account key: ${r.replaced} -> ${r.keyId}; ${r.rewrapped} session key(s) re-wrapped${left}. Other machines must import the new key (\`sessync key import\`)`, { ...r, key: r.exported, warning: LOSS_WARNING });
      return r.left.length ? 1 : 0;
    }
    if (verb === 'init') {
      const ctxSync = await openSync(ctx.env, { note: (t) => ctx.info(t) });
      const r = await withSyncLock(ctxSync, () => convertAccount(s, ctxSync, (t) => ctx.info(t)));
      if (r.exported && !ctx.json) showOnce(ctx, r.exported);
      const left = r.left.length ? `; ${r.left.length} object(s) could not be sealed: ${r.left.slice(0, 3).map((l) => `${l.session}${l.seq ? ` batch ${l.seq} of host ${l.host}` : ''}: ${l.reason}`).join('; ')}` : '';
      ctx.print(`account ${s.account} is end-to-end encrypted with key ${r.keyId}: ${r.sessions} session(s), ${r.sealedBatches} batch(es) and ${r.sealedMetas} meta sealed by this run${left}`, { ...r, ...(r.exported ? { key: r.exported, warning: LOSS_WARNING } : {}) });
      return r.left.length ? 1 : 0;
    }
    throw new SessyncError('bad_input', `unknown "key ${verb}": usage: sessync key ${USAGE}`);
  },
};
export default command;
