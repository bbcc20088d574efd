// A test file's rig for the real Codex CLI: the sessync server, the fake Responses API, machines whose Codex talks only to it.
import { afterAll, beforeAll } from 'vitest';
import { useServer, type TestServer } from '../sync/helpers.js';
import { codexConfig, codexResume } from './codex-cli.js';
import { CodexMachine } from './codex-rig.js';
import { responsesConversation, startFakeResponses, type FakeResponses } from './fake-openai-responses.js';

export interface CodexCliRig {
  readonly server: TestServer;
  readonly api: FakeResponses;
  /** A machine in the rig's root whose CODEX_HOME is configured for the fake API. */
  machine(name: string, remote?: string): CodexMachine;
  /** Where and as whom codex runs on `m`. */
  on(m: CodexMachine): { cwd: string; home: string; codexHome: string };
  /** `codex exec resume <id> <prompt>` on `m`, the model answering `reply`: the conversation the model was sent. */
  ask(m: CodexMachine, id: string, prompt: string, reply: string): Promise<string[]>;
}

/** Call at describe level: starts both servers before the tests, stops them after. `ours` picks the test's own turns. */
export function useCodexCli(bin: () => string, prefix: string, ours: RegExp): CodexCliRig {
  const rig = useServer(undefined, prefix);
  let api: FakeResponses;
  beforeAll(async () => {
    api = await startFakeResponses();
  });
  afterAll(async () => {
    await api?.close();
  });
  const on = (m: CodexMachine) => ({ cwd: m.project, home: m.userHome, codexHome: m.codexHome });
  return {
    get server() {
      return rig.server;
    },
    get api() {
      return api;
    },
    machine(name, remote = 'git@github.com:Acme/Codexy.git') {
      const m = new CodexMachine(rig.root, name, { remote });
      codexConfig(m.codexHome, api.url);
      return m;
    },
    on,
    async ask(m, id, prompt, reply) {
      api.replies.push(reply);
      await codexResume(bin(), on(m), id, prompt);
      return responsesConversation(api.requests[api.requests.length - 1]!, ours);
    },
  };
}
