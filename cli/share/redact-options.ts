// What the CLI feeds redaction from this machine: the project's .env values, secret-looking env vars, the home path.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SessyncError } from '../../shared/errors.js';
import { secretsFromDotenv, secretsFromEnv, type RedactOptions } from '../../shared/redact.js';

/** .env files read from the project folder, in this order. */
export const DOTENV_FILES = ['.env', '.env.local'];

export interface MachineSecrets {
  options: RedactOptions;
  /** The .env files that were found and read. */
  dotenvFiles: string[];
}

export async function machineSecrets(projectDir: string, env: NodeJS.ProcessEnv): Promise<MachineSecrets> {
  const secrets = secretsFromEnv(env);
  const dotenvFiles: string[] = [];
  for (const name of DOTENV_FILES) {
    const p = join(projectDir, name);
    let text: string;
    try {
      text = await readFile(p, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      // An unreadable .env may hold exactly what must not leak: refuse rather than share unredacted.
      throw new SessyncError('forbidden', `cannot read ${p} to redact its values (${(e as Error).message}); fix its permissions or pass --no-redact`);
    }
    dotenvFiles.push(p);
    secrets.push(...secretsFromDotenv(text));
  }
  return { options: { secrets, homeDir: env.HOME || homedir() }, dotenvFiles };
}
