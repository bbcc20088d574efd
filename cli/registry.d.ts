// Type of the command registry that scripts/build.mjs generates from the files in cli/commands/.
declare module 'sessync:commands' {
  import type { Command } from './command.js';
  export const commands: Record<string, () => Promise<{ default: Command }>>;
}
