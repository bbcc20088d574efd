// Human text for `resume` and `continue`.
import type { MigrateResult } from '../store/migrate-file.js';
import type { ResumeInfo } from '../store/resume-session.js';
import { shortId } from './short-id.js';

export function migrationNote(m: MigrateResult): string {
  return `migrated ${m.path} from format v${m.fromVersion} to v${m.toVersion}; original kept at ${m.backup}` +
    (m.problems.length ? ` (${m.problems.length} unreadable line(s) stay only in the backup)` : '');
}

/** The short form and the full id, or the id once when the short form is all of it (pi's 8-hex ids). */
function bothForms(id: string): string {
  const short = shortId(id);
  return short === id ? id : `${short}  ${id}`;
}

export function resumeText(r: ResumeInfo): string {
  const lines = [
    `session  ${bothForms(r.id)}`,
    `file     ${r.path}`,
    `leaf     ${r.leafId ? bothForms(r.leafId) : '(empty session)'}`,
    `model    ${r.model ? `${r.model.provider}/${r.model.modelId}` : '(none recorded)'}`,
    `thinking ${r.thinkingLevel ?? '(default)'}`,
    `messages ${r.messageCount} in context`,
  ];
  if (r.problems.length) {
    lines.push(`problems ${r.problems.length} (run \`sessync doctor ${shortId(r.id)}\`):`);
    for (const p of r.problems.slice(0, 5)) lines.push(`  ${'line' in p ? `line ${p.line}` : `entry ${shortId(p.entryId)}`}: ${p.reason}`);
  }
  return lines.join('\n');
}
