/**
 * Agents as a `--agent` module now exports them: the agent alone, its defaults giving the tools
 * and executor, every request rebuilt from the run's log. Three versions of one agent, so a run
 * started under the first meets code that changed: `v2` adds a `search` tool and a system
 * message (context), `v3` drops the `send` tool an open approval names. The model's script,
 * by call: a lookup, a `send` that needs approval, then the answer.
 */
import {
  defineAgent,
  jsonActionInterpreter,
  silentSink,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { AgentDefaults, AgentDefinition, JsonValue, Message, ModelReply } from '../../../src/core/index.ts';
import type { ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { scriptedModel } from '../../../src/testing/index.ts';

/** What `send` sent, per run. */
export const SENT_V: { runId: string; to: string }[] = [];

const object = (properties: Record<string, JsonValue>, required: string[]): ToolSpec['parameters'] => ({
  type: 'object',
  properties,
  required,
});
const lookup: ToolSpec = {
  name: 'lookup',
  description: 'Look a city up.',
  replayPolicy: 'safe',
  parameters: object({ city: { type: 'string' } }, ['city']),
  handler: async ({ city }) => `${String(city)}: 21°C`,
};
const search: ToolSpec = {
  name: 'search',
  description: 'Search the web.',
  replayPolicy: 'safe',
  parameters: object({ q: { type: 'string' } }, ['q']),
  handler: async () => 'nothing',
};
const send = (runId: () => string): ToolSpec => ({
  name: 'send',
  description: 'Send an email.',
  replayPolicy: 'never',
  needsApproval: true,
  parameters: object({ to: { type: 'string' } }, ['to']),
  handler: async ({ to }) => (SENT_V.push({ runId: runId(), to: String(to) }), 'sent'),
});

const say = (n: number, body: unknown): ModelReply => ({
  callId: `c-${n}`,
  text: JSON.stringify(body),
  reasoning: null,
  finishReason: 'stop',
});
const SYSTEM: Message = { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] };

/** The three versions of the agent over a FileStore on `dir` (and one without the defaults resume by id needs). */
type Versions = { v1: AgentDefinition; v2: AgentDefinition; v3: AgentDefinition; bare: AgentDefinition };

export function agentVersions(dir: string): Versions {
  let current = '';
  const model = scriptedModel((call) => {
    current = call.runId;
    const n = call.callSeq;
    if (n === 0) return say(n, { tool: 'lookup', args: { city: 'Oslo' } });
    return n === 1 ? say(n, { tool: 'send', args: { to: 'ana@example.com' } }) : say(n, { final: 'Sent.' });
  });
  const common = {
    budget: { maxSteps: 20, maxValidActions: 20, maxContextChars: 1_000_000 },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 2_000,
  } as const satisfies AgentDefaults;
  const define = (specs: ToolSpec[] | null, extra: AgentDefaults = {}): AgentDefinition => {
    const tools = specs === null ? null : ToolRegistry.of(specs);
    const code = tools === null ? {} : { tools, executor: tools.executor() };
    const defaults: AgentDefaults = { ...common, ...code, ...extra };
    const store = new FileStore({ dir });
    const interpreter = jsonActionInterpreter();
    const syntheticObservations = STANDARD_SYNTHETIC_OBSERVATIONS;
    return defineAgent({ model, interpreter, store, events: silentSink(), syntheticObservations, defaults });
  };
  const sendTool = send(() => current);
  return {
    v1: define([lookup, sendTool]),
    v2: define([lookup, sendTool, search], { context: { run: [SYSTEM] } }),
    v3: define([lookup, search]),
    bare: define(null),
  };
}
