// Every agent adapter by name: the one place that lists them.
import type { Agent, AgentName } from './agent.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { pi } from './pi.js';

export const AGENTS: Readonly<Record<AgentName, Agent>> = { pi, 'claude-code': claudeCode, codex };
