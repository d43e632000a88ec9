/**
 * The messages of a step rebuilt from a run's log: what the model caller was handed at that step
 * (run context, tool section, injections, goal, history) and the tools of the call — equal to what
 * a real run handed its model, step by step, and honest about what the log cannot give back.
 */
import { describe, expect, it } from 'vitest';
import { defineAgent, InMemoryStore, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ActionExecutor, AgentDefaults, LogRecord, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { stepMessages } from '../../../src/core/internal-entry.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { SYNTHETIC, text } from './fixtures.ts';

/** Schemas declared with their keys in sorted order: the log's canonical JSON keeps that order. */
const lookup: ToolSpec = {
  name: 'lookup',
  description: 'Look a city up.',
  parameters: { properties: { city: { type: 'string' } }, required: ['city'], type: 'object' },
  replayPolicy: 'safe',
  handler: async ({ city }) => `${String(city)}: 21°C`,
};
const send: ToolSpec = {
  name: 'send',
  description: 'Send an email.',
  parameters: { properties: { to: { minLength: 3, type: 'string' } }, required: ['to'], type: 'object' },
  replayPolicy: 'never',
  needsApproval: true,
  handler: async ({ to }) => `sent to ${String(to)}`,
};

const SCRIPT = [
  '{"tool":"lookup","args":{"city":"Oslo"}}',
  'not json at all',
  '{"tool":"send","args":{"to":"ana@example.com"}}',
  '{"tool":"send","args":{"to":"bo@example.com"}}',
  '{"final":"done"}',
];

function defaults(tools: readonly ToolSpec[], injected: string): AgentDefaults {
  const registry = ToolRegistry.of(tools);
  return {
    tools: registry,
    executor: registry.executor(),
    budget: { maxSteps: 20, maxValidActions: 20, maxContextChars: 1_000_000 },
    context: { run: [text('system', 'You are careful.')] },
    injections: { skills: [{ name: 'weather', text: injected }], empty: [] },
    modelBinding: { region: 'eu' },
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1_000,
  };
}

function agentOf(store: RunStore, d: AgentDefaults, script: readonly string[] = SCRIPT) {
  const model = scriptedModel(script);
  const agent = defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
    defaults: d,
  });
  return { agent, model };
}

/** The messages and tools a step handed its model, without the parts' labels. */
function rebuilt(records: readonly LogRecord[], i: number) {
  const got = stepMessages(records, i);
  return got && { messages: got.messages.map((m) => m.message), tools: got.tools };
}

describe('stepMessages', () => {
  it('gives back, step by step, exactly the messages and tools a run handed its model', async () => {
    const store = new InMemoryStore();
    const { agent, model } = agentOf(store, defaults([lookup, send], 'Say °C.'));
    const paused = await run(agent, { runId: 'r', goal: 'Tell Ana the weather.' });
    expect(paused.stopReason).toBe('awaiting_input');
    // Waiting for a person at step 2: that step's model call is in the log already.
    expect(rebuilt(await store.readLog('r'), 2)).toEqual({
      messages: model.calls[2]?.messages,
      tools: model.calls[2]?.tools,
    });
    const denied = await resume(agent, 'r', { input: { kind: 'deny', resultId: 's2.input', reason: 'not Ana' } });
    expect(denied.stopReason).toBe('awaiting_input');
    const done = await resume(agent, 'r', {
      input: { kind: 'approve', resultId: 's3.input', arguments: { to: 'bo@example.org' } },
    });
    expect(done.stopReason).toBe('final_answer');
    const log = await store.readLog('r');
    expect(model.calls).toHaveLength(5);
    for (const [i, call] of model.calls.entries())
      expect(rebuilt(log, i), `step ${i}`).toEqual({ messages: call.messages, tools: call.tools });
    const last = stepMessages(log, 4);
    expect(last?.binding).toEqual({ region: 'eu' });
    // The edited approval's observation, as history shows it, says what the person changed.
    const told = JSON.stringify(last?.messages.at(-1)?.message);
    expect(told).toContain('A person changed the arguments of this call before it ran');
  });

  it('labels each message with its part and, for history, the step that added it', async () => {
    const store = new InMemoryStore();
    const { agent } = agentOf(store, defaults([lookup, send], 'Say °C.'));
    await run(agent, { runId: 'r', goal: 'Tell Ana the weather.' });
    const got = stepMessages(await store.readLog('r'), 2);
    expect(got?.messages.map((m) => [m.part, m.step, m.message.role])).toEqual([
      ['context', null, 'system'],
      ['tools', null, 'system'],
      ['injection', null, 'system'],
      ['goal', null, 'user'],
      ['history', 0, 'assistant'],
      ['history', 0, 'user'],
      ['history', 1, 'assistant'],
      ['history', 1, 'user'],
    ]);
    expect(got?.stepIndex).toBe(2);
  });

  it('rebuilds each step under the code in force at its model call: a step answered after an upgrade was asked before it', async () => {
    const store = new InMemoryStore();
    const v1 = agentOf(store, defaults([lookup, send], 'Say °C.'));
    await run(v1.agent, { runId: 'r', goal: 'Tell Ana the weather.' });
    await resume(v1.agent, 'r', { input: { kind: 'deny', resultId: 's2.input', reason: 'no' } });
    const v2 = agentOf(store, defaults([lookup, send], 'Say °F now.'));
    await resume(v2.agent, 'r', {
      upgrade: { reason: 'deploy 2: Fahrenheit' },
      input: { kind: 'approve', resultId: 's3.input' },
    });
    const log = await store.readLog('r');
    // The upgrade names step 3, whose model call was made under the old code before it.
    expect(log.filter((r) => r.kind === 'upgrade').map((u) => u.kind === 'upgrade' && u.stepIndex)).toEqual([3]);
    for (const i of [0, 1, 2, 3])
      expect(rebuilt(log, i), `step ${i}`).toEqual({
        messages: v1.model.calls[i]?.messages,
        tools: v1.model.calls[i]?.tools,
      });
    const after = rebuilt(log, 4);
    expect(after).toEqual({ messages: v2.model.calls[0]?.messages, tools: v2.model.calls[0]?.tools });
    expect(JSON.stringify(after?.messages)).toContain('Say °F now.');
  });

  it('says what the log cannot give back: the schema key order a tool declared, a custom executor, the model caller', async () => {
    const store = new InMemoryStore();
    const unsorted: ToolSpec = {
      ...lookup,
      parameters: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } },
    };
    const custom: ActionExecutor = {
      params: { kind: 'sandbox' },
      async execute() {
        return {
          status: 'executed',
          observation: 'ok',
          observationIsSynthetic: false,
          envReportedCompletion: false,
          observationTruncatedChars: 0,
        };
      },
    };
    const d = { ...defaults([unsorted], 'Say °C.'), executor: custom };
    const { agent, model } = agentOf(store, d);
    await run(agent, { runId: 'r', goal: 'Weather?' });
    const got = stepMessages(await store.readLog('r'), 1);
    const notes = got?.limits.join('\n') ?? '';
    expect(notes).toMatch(/model caller/);
    expect(notes).toMatch(/keys in sorted order/);
    expect(notes).toMatch(/custom executor/);
    // Everything but the tool section's text is what the model saw.
    const called = model.calls[1]?.messages ?? [];
    const shown = got?.messages.map((m) => m.message) ?? [];
    const notTools = (_: unknown, i: number): boolean => i !== 1;
    expect(shown.filter(notTools)).toEqual(called.filter(notTools));
    expect(shown[1]).not.toEqual(called[1]);
  });

  it('gives nothing for a step that never called the model, a step past the log, or an empty log', async () => {
    const store = new InMemoryStore();
    const d = { ...defaults([], 'x'), toolRenderStyle: 'none' as const };
    const { agent } = agentOf(store, d, ['{"tool":"lookup","args":{"city":"Oslo"}}', '{"final":"done"}']);
    await run(agent, { runId: 'r', goal: 'Weather?' });
    const log = await store.readLog('r');
    expect(log.filter((r) => r.kind === 'step')).toHaveLength(2);
    expect(stepMessages(log, 2)).toBeNull();
    expect(stepMessages(log, 99)).toBeNull();
    expect(stepMessages(log, -1)).toBeNull();
    expect(stepMessages(log, 0.5)).toBeNull();
    expect(stepMessages([], 0)).toBeNull();
    // Without tools only the limit of every log is said.
    expect(stepMessages(log, 0)?.limits).toHaveLength(1);
  });
});
