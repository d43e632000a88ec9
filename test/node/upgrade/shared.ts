/**
 * What both versions of the upgrade test's agent module share, as a real code base would: the
 * model (a pure function of the call, so it works under either version), the two tools version
 * A already had, and the FileStore both processes open. The run's directory and side-effect file
 * come from the environment (`UPGRADE_DIR`, `UPGRADE_SIDE`), as a deployed agent's settings do.
 */
import { appendFileSync } from 'node:fs';
import { STANDARD_SYNTHETIC_OBSERVATIONS, silentSink } from '../../../src/core/index.ts';
import type { AgentConfig, Message, ModelCall, ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`the upgrade test's agent needs ${name} in its environment`);
  return value;
}

const textOf = (m: Message | undefined): string =>
  m?.content.map((b) => (b.type === 'text' ? b.text : '')).join('') ?? '';

/**
 * Look up Paris, notify ops (a `never` tool a person approves), use the forecast tool when the
 * run has one, then answer — naming the system prompt the answer was written under, so the
 * answer shows which prompt was in force.
 */
function reply(call: ModelCall): string {
  const system = textOf(call.messages.find((m) => m.role === 'system'));
  const last = textOf(call.messages.at(-1));
  if (call.callSeq === 0) return JSON.stringify({ tool: 'lookup', args: { city: 'Paris' } });
  if (call.callSeq === 1) return JSON.stringify({ tool: 'notify', args: { to: 'ops', text: `Paris is ${last}` } });
  if (call.callSeq === 2 && call.tools.some((t) => t.name === 'forecast')) {
    return JSON.stringify({ tool: 'forecast', args: { city: 'Paris' } });
  }
  return JSON.stringify({ final: `last observation: ${last} (under "${system}")` });
}

/** The agent's seams, the same in both versions; `defaults` is what a version changes. */
export function seams(): Omit<AgentConfig, 'defaults'> {
  return {
    model: scriptedModel(reply, { model: 'weather-policy' }),
    interpreter: jsonActionInterpreter(),
    store: new FileStore({ dir: setting('UPGRADE_DIR') }),
    events: silentSink(),
    syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
  };
}

/** `lookup` (safe) and `notify` (never, approved by a person; each run of it appends a line to the side file). */
export function firstTools(): ToolSpec[] {
  return [
    {
      name: 'lookup',
      description: 'Look up the weather of a city.',
      replayPolicy: 'safe',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      handler: async () => 'sunny',
    },
    {
      name: 'notify',
      description: 'Tell a team something (must not repeat).',
      replayPolicy: 'never',
      needsApproval: true,
      parameters: {
        type: 'object',
        properties: { to: { type: 'string' }, text: { type: 'string' } },
        required: ['to', 'text'],
      },
      handler: async ({ to, text }) => {
        appendFileSync(setting('UPGRADE_SIDE'), `${String(to)}: ${String(text)}\n`);
        return 'sent';
      },
    },
  ];
}

/** The request fields both versions keep. */
export const COMMON_DEFAULTS = {
  budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 50_000 },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe',
  observationTemplate: '{observation}',
  toolRenderStyle: 'none',
  cancelGraceMs: 1_000,
} as const;

export const system = (text: string): Message => ({ role: 'system', content: [{ type: 'text', text }] });
