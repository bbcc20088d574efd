// pi's adapter: the conformance suite on every real pi fixture (format 1 files migrated first, as the CLI does).
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pi, piProjectFolder } from '../../shared/agents/pi.js';
import { parseSession, serializeSession } from '../../shared/jsonl.js';
import { migrateSession } from '../../shared/migrate.js';
import { encodeCwd } from '../../cli/store/paths.js';
import { agentConformance, type SessionSample } from './agent.case.js';
import { fixtureFiles, read } from './fixture-samples.js';

const samples: SessionSample[] = [];
for (const path of [...fixtureFiles('pi-v3'), ...fixtureFiles('pi-v1')]) {
  let text = read(path);
  const parsed = parseSession(text);
  if (parsed.version < 3) {
    const m = await migrateSession(parsed);
    text = serializeSession(m.header, m.entries);
  }
  const id = parsed.header!.id;
  samples.push({ name: basename(path), session: id, files: [{ file: { rel: pi.mainFile(id, parsed.header!.timestamp), kind: 'main' }, text }] });
}

const ID = '01a22ceb-6179-7000-8000-000000000001';
agentConformance({
  agent: pi,
  samples,
  pinsLeaf: false,
  files: [
    {
      session: ID,
      rels: ['2025-01-01T00-00-00-000Z_other.jsonl', `2025-01-01T00-00-00-000Z_${ID}.jsonl`, 'notes.txt'],
      expect: [{ rel: `2025-01-01T00-00-00-000Z_${ID}.jsonl`, kind: 'main' }],
    },
  ],
});

describe('pi folders', () => {
  it('PI_CODING_AGENT_DIR first, then HOME; the folder name is the CLI store one', () => {
    expect(pi.sessionsRoot({ PI_CODING_AGENT_DIR: '/x/agent' }, '/home/me')).toBe('/x/agent/sessions');
    expect(pi.sessionsRoot({}, '/home/me')).toBe('/home/me/.pi/agent/sessions');
    for (const cwd of ['/home/me/code/app', 'C:\\Users\\me\\app', '/a:b/c']) expect(piProjectFolder(cwd)).toBe(encodeCwd(cwd));
  });
});
