/**
 * The JSON Schema validator loads on demand (docs/decisions/0081-tools-with-their-own-validator.md),
 * proved on a fresh module graph: the vitest setup loads it before every test file, so each test
 * here resets the modules, gates the module's arrival, and imports the entries again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as loadedCore from '../../../src/core/index.ts';
import type { JsonObject, ModelCaller, ModelReply, RunRequest, RunStore, ToolSpec } from '../../../src/core/index.ts';
import * as loadedTesting from '../../../src/testing/index.ts';

const MODULE = '../../../src/core/json-schema-tools.ts';

type Fresh = {
  core: typeof import('../../../src/core/index.ts');
  testing: typeof import('../../../src/testing/index.ts');
  zod: typeof import('../../../src/zod/index.ts');
  /** How often the JSON Schema module was asked for. */
  imports: () => number;
  /** Lets the module arrive. */
  arrive: () => void;
};

/** The entries on a module graph where the JSON Schema module has not loaded, and arrives when told. */
async function fresh(): Promise<Fresh> {
  vi.resetModules();
  let imports = 0;
  let arrive!: () => void;
  const gate = new Promise<void>((r) => (arrive = r));
  vi.doMock(MODULE, async (importOriginal) => {
    imports += 1;
    await gate;
    return await importOriginal();
  });
  const core = await import('../../../src/core/index.ts');
  const testing = await import('../../../src/testing/index.ts');
  const zod = await import('../../../src/zod/index.ts');
  return { core, testing, zod, imports: () => imports, arrive };
}

afterEach(() => {
  vi.doUnmock(MODULE);
  vi.resetModules();
});

const sum: ToolSpec = {
  name: 'sum',
  description: 'Adds two integers.',
  parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
  replayPolicy: 'safe',
  handler: async (args) => String((args['a'] as number) + (args['b'] as number)),
};
/** A schema the JSON Schema checks refuse (a keyword of the wrong kind). */
const badSchema: JsonObject = { type: 'object', properties: { a: { type: 'integer', minimum: 'zero' } } };
const call = (args: JsonObject) => ({ kind: 'tool_call' as const, name: 'sum', arguments: args });

function setup(f: Fresh, specs: readonly ToolSpec[], script: readonly string[]) {
  const { core, testing } = f;
  const store = new core.InMemoryStore();
  const model = testing.scriptedModel(script.map((text): ModelReply => ({ callId: null, text, reasoning: null })));
  const agent = core.defineAgent({
    model,
    interpreter: testing.jsonActionInterpreter(),
    store,
    events: testing.collectingSink(),
    syntheticObservations: { notExecuted: 'Not run.', envError: 'Failed.' },
  });
  const tools = core.ToolRegistry.of(specs);
  const request: RunRequest = {
    runId: 'lazy',
    budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 100_000 },
    executor: tools.executor(),
    tools,
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Add 1 and 2.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1000,
  };
  return { agent, request, store, tools };
}

/** An agent whose defaults hold the whole request but its id and goal (so `resume` by id can rebuild it). */
function agentOn(
  core: Fresh['core'],
  testing: Fresh['testing'],
  store: RunStore,
  specs: readonly ToolSpec[],
  script: readonly string[],
) {
  const model: ModelCaller = {
    params: { model: 'lazy' },
    call: async ({ callSeq }) => ({ callId: `c${callSeq}`, text: script[callSeq] ?? '{"final":"?"}', reasoning: null }),
  };
  const tools = core.ToolRegistry.of(specs);
  return core.defineAgent({
    model,
    interpreter: testing.jsonActionInterpreter(),
    store,
    events: { params: { sink: 'none' }, deliver: () => {} },
    syntheticObservations: { notExecuted: 'Not run.', envError: 'Failed.' },
    defaults: {
      tools,
      executor: tools.executor(),
      budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 100_000 },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: '{observation}',
      toolRenderStyle: 'none',
      cancelGraceMs: 1000,
    },
  });
}

describe('the JSON Schema validator loads only when a tool needs it', () => {
  it('answers "could not be checked", never valid, for a call validated before the validator arrives', async () => {
    const f = await fresh();
    const tools = f.core.ToolRegistry.of([sum]);
    const early = tools.validate(call({ a: 1, b: 2 }));
    expect(early.ok).toBe(false);
    expect(early.ok ? '' : early.message).toMatch(/^arguments of "sum" could not be checked against its schema \(/);
    f.arrive();
    await tools.loaded();
    expect(f.imports()).toBe(1);
    expect(tools.validate(call({ a: 1, b: 2 }))).toEqual({ ok: true });
    expect(tools.validate(call({ a: 1, b: 'two' })).ok).toBe(false);
  });

  it('makes a run wait for it, so the first call of the run is checked', async () => {
    const f = await fresh();
    const script = ['{"tool":"sum","args":{"a":1,"b":"two"}}', '{"tool":"sum","args":{"a":1,"b":2}}', '{"final":"3"}'];
    const { agent, request } = setup(f, [sum], script);
    const pending = f.core.run(agent, request);
    f.arrive();
    const result = await pending;
    expect(result.stopReason).toBe('final_answer');
    const [refused, ran] = result.trajectory;
    expect(refused?.actionStatus).toBe('not_executed');
    expect(refused?.observation).toContain('arguments of "sum" do not match its schema: #/b:');
    expect(ran?.actionStatus).toBe('executed');
    expect(ran?.observation).toBe('3');
  });

  it('makes a resume by run id wait for it too, so the approved call it carries out is checked and runs', async () => {
    const store = new loadedCore.InMemoryStore();
    const approved: ToolSpec = { ...sum, needsApproval: true };
    const script = ['{"tool":"sum","args":{"a":1,"b":2}}', '{"final":"3"}'];
    const asked = await loadedCore.run(agentOn(loadedCore, loadedTesting, store, [approved], script), {
      runId: 'lazy',
      goal: 'Add 1 and 2.',
    });
    expect(asked.stopReason).toBe('awaiting_input');
    const resultId = asked.pending?.resultId ?? '';
    const f = await fresh();
    const agent = agentOn(f.core, f.testing, store, [approved], script);
    const pending = f.core.resume(agent, 'lazy', { input: { kind: 'approve', resultId } });
    f.arrive();
    const result = await pending;
    expect(f.imports()).toBe(1);
    expect(result.stopReason).toBe('final_answer');
    expect(result.trajectory[0]).toMatchObject({ actionStatus: 'executed', observation: '3' });
  });

  it('refuses a bad schema by loaded() and by the run, with the error ToolRegistry.of gives once it has loaded', async () => {
    const spec = { ...sum, parameters: badSchema };
    let today: unknown;
    try {
      loadedCore.ToolRegistry.of([spec]);
    } catch (e) {
      today = e;
    }
    expect(today).toBeInstanceOf(loadedCore.InvalidRequestError);
    const f = await fresh();
    const { agent, request, store, tools } = setup(f, [spec], ['{"final":"never"}']);
    const pending = f.core.run(agent, request);
    f.arrive();
    await expect(tools.loaded()).rejects.toThrow((today as Error).message);
    await expect(tools.loaded()).rejects.toBeInstanceOf(f.core.InvalidRequestError);
    await expect(pending).rejects.toThrow((today as Error).message);
    expect(await store.readLog('lazy')).toEqual([]);
  });

  it('never asks for the validator for a zod tool without a pattern, and checks its calls with zod', async () => {
    const f = await fresh();
    const { z } = await import('zod');
    const add = f.zod.defineTool({
      name: 'sum',
      description: 'Adds two integers.',
      schema: z.object({ a: z.number().int(), b: z.number().int() }),
      replayPolicy: 'safe',
      handler: async ({ a, b }) => String(a + b),
    });
    const script = ['{"tool":"sum","args":{"a":1,"b":"two"}}', '{"tool":"sum","args":{"a":1,"b":2}}', '{"final":"3"}'];
    const { agent, request, tools } = setup(f, [add], script);
    expect(tools.validate(call({ a: 1, b: 2 }))).toEqual({ ok: true });
    const result = await f.core.run(agent, request);
    expect(result.trajectory.map((s) => s.actionStatus)).toEqual(['not_executed', 'executed', null]);
    expect(f.imports()).toBe(0);
  });

  it('lets an abort during the wait win: the run rejects with the reason and writes nothing', async () => {
    const f = await fresh();
    const { agent, request, store } = setup(f, [sum], ['{"final":"never"}']);
    const ctl = new AbortController();
    const pending = f.core.run(agent, request, { signal: ctl.signal });
    const reason = new Error('stopped while the validator loads');
    ctl.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(await store.readLog('lazy')).toEqual([]);
    f.arrive();
  });
});
