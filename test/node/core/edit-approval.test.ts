/**
 * Edit on approval: a person approves a tool call with other arguments. They are checked, stored,
 * and run; the history keeps what the model proposed and says what the person changed.
 */
import { describe, expect, it } from 'vitest';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import {
  CorruptLogError,
  defineAgent,
  InMemoryStore,
  importRun,
  InvalidInputError,
  readRunLog,
  resume,
  run,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { LogRecord, Message, ModelReply, RunRequest, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { encodeRecord } from '../../../src/core/serialization.ts';
import { collectingSink, scriptedModel } from '../../../src/testing/index.ts';

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' };
const final = (text: string): ModelReply => ({ text, reasoning: null, callId: null });
const PAY = (amount: number, to = 'acme', id = 'c1'): ModelReply => ({
  text: '',
  reasoning: null,
  callId: null,
  toolCalls: [{ id, name: 'pay', arguments: { amount, to } }],
});
/** Two payments in one reply, each asking for approval. */
const TWO: ModelReply = {
  text: '',
  reasoning: null,
  callId: null,
  toolCalls: [
    { id: 'c1', name: 'pay', arguments: { amount: 700, to: 'acme' } },
    { id: 'c2', name: 'pay', arguments: { amount: 20, to: 'bolt' } },
  ],
};
const SENTENCE = 'A person changed the arguments of this call before it ran, to ';

function setup(opts: { script: readonly ModelReply[]; store?: RunStore; parallel?: number }) {
  const paid: unknown[] = [];
  const pay: ToolSpec = {
    name: 'pay',
    description: 'Pay an amount to someone.',
    parameters: {
      type: 'object',
      properties: { amount: { type: 'integer', minimum: 1, maximum: 1000 }, to: { type: 'string', minLength: 2 } },
      required: ['amount', 'to'],
      additionalProperties: false,
    },
    replayPolicy: 'never',
    needsApproval: true,
    handler: async (args) => {
      paid.push(args);
      return `paid ${String(args['amount'])} to ${String(args['to'])}`;
    },
  };
  const model = scriptedModel(opts.script);
  const store = opts.store ?? new InMemoryStore();
  const registry = ToolRegistry.of([pay]);
  const agent = defineAgent({
    model,
    interpreter: nativeToolInterpreter('test'),
    store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
  });
  const request: RunRequest = {
    runId: 'edit',
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: registry.executor(),
    tools: registry,
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Pay acme.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1_000,
    ...(opts.parallel === undefined ? {} : { parallelToolCalls: opts.parallel }),
  };
  return { agent, request, model, store, paid };
}

describe('edit on approval', () => {
  it('runs the edited arguments, keeps the proposal in history and says what the person changed', async () => {
    const s = setup({ script: [PAY(900), final('done')] });
    const paused = await run(s.agent, s.request);
    expect(paused.pending?.resultId).toBe('s0.input');
    const input = { kind: 'approve' as const, resultId: 's0.input', arguments: { amount: 90, to: 'acme' } };
    const result = await resume(s.agent, s.request, { input });
    expect(result.stopReason).toBe('final_answer');
    expect(s.paid).toEqual([{ amount: 90, to: 'acme' }]);
    const [step] = result.trajectory;
    expect(step?.observation).toBe(`${SENTENCE}{"amount":90,"to":"acme"}.\npaid 90 to acme`);
    expect(step?.actionRepr).toBe('pay({"amount":90,"to":"acme"})');
    const seen = s.model.calls[1]?.messages ?? [];
    const assistant = seen.at(-2) as Message;
    expect(assistant.content).toContainEqual(
      expect.objectContaining({ type: 'tool_call', name: 'pay', arguments: { amount: 900, to: 'acme' } }),
    );
    expect(JSON.stringify(seen.at(-1))).toContain(SENTENCE);
    const log = await s.store.readLog('edit');
    const stored = log.find((r) => r.kind === 'input');
    expect(stored).toMatchObject({ reply: input });
    const intent = log.find((r) => r.kind === 'intent' && r.intent === 'action');
    expect(intent).toMatchObject({ decision: { action: { arguments: { amount: 90, to: 'acme' } } } });
  });

  it('refuses arguments the schema refuses, naming every problem, and writes nothing', async () => {
    const s = setup({ script: [PAY(900), final('done')] });
    await run(s.agent, s.request);
    const before = await s.store.readLog('edit');
    const input = { kind: 'approve' as const, resultId: 's0.input', arguments: { amount: 0, to: 'x', tip: 1 } };
    const refused = resume(s.agent, s.request, { input });
    await expect(refused).rejects.toBeInstanceOf(InvalidInputError);
    const message = await refused.catch((e: Error) => e.message);
    expect(message).toContain('/amount');
    expect(message).toContain('/to');
    expect(message).toContain('tip');
    expect(await s.store.readLog('edit')).toEqual(before);
    expect(s.paid).toEqual([]);
  });

  it('refuses arguments on any reply but an approval, and arguments that are no object', async () => {
    const s = setup({ script: [PAY(900), final('done')] });
    await run(s.agent, s.request);
    const deny = { kind: 'deny', resultId: 's0.input', reason: 'no', arguments: { amount: 1, to: 'ab' } };
    await expect(resume(s.agent, s.request, { input: deny as never })).rejects.toThrow(/only with kind "approve"/);
    const list = { kind: 'approve', resultId: 's0.input', arguments: [1, 2] };
    await expect(resume(s.agent, s.request, { input: list as never })).rejects.toThrow(/must be an object/);
  });

  it('replays the edited call after a crash between its intent and its result: a settlement shows the edited call', async () => {
    const s = setup({ script: [PAY(900), final('done')] });
    await run(s.agent, s.request);
    const input = { kind: 'approve' as const, resultId: 's0.input', arguments: { amount: 90, to: 'acme' } };
    await resume(s.agent, s.request, { input });
    const log = await s.store.readLog('edit');
    const cut = log.slice(
      0,
      log.findIndex((r) => r.kind === 'step'),
    );
    const crashed = setup({ script: [final('done')], store: await copy(cut) });
    const settled = await resume(crashed.agent, crashed.request);
    expect(settled.pending?.kind).toBe('settle');
    expect(settled.pending?.decision?.action).toMatchObject({ arguments: { amount: 90, to: 'acme' } });
    expect(crashed.paid).toEqual([]);
  });

  it('takes a log whose action intent runs other arguments than the approval named as forged', async () => {
    const s = setup({ script: [PAY(900), final('done')] });
    await run(s.agent, s.request);
    const input = { kind: 'approve' as const, resultId: 's0.input', arguments: { amount: 90, to: 'acme' } };
    await resume(s.agent, s.request, { input });
    const log = await s.store.readLog('edit');
    const at = log.findIndex((r) => r.kind === 'intent' && r.intent === 'action');
    const forged = log.slice(0, at + 1).map((r, i) => (i === at ? swapAmount(r, 400) : r));
    await expect(copy(forged)).rejects.toBeInstanceOf(CorruptLogError);
  });

  it('edits one call of a step with several: that call runs as edited and its observation says so', async () => {
    const s = setup({ script: [TWO, final('done')], parallel: 2 });
    const paused = await run(s.agent, s.request);
    expect(paused.stopReason).toBe('awaiting_input');
    const edited = { kind: 'approve' as const, resultId: 's0.a0.input', arguments: { amount: 70, to: 'acme' } };
    await resume(s.agent, s.request, { input: edited });
    const result = await resume(s.agent, s.request, { input: { kind: 'approve', resultId: 's0.a1.input' } });
    expect(result.stopReason).toBe('final_answer');
    expect(s.paid).toEqual(
      expect.arrayContaining([
        { amount: 70, to: 'acme' },
        { amount: 20, to: 'bolt' },
      ]),
    );
    expect(s.paid).toHaveLength(2);
    const calls = result.trajectory[0]?.calls ?? [];
    expect(calls[0]?.observation).toBe(`${SENTENCE}{"amount":70,"to":"acme"}.\npaid 70 to acme`);
    expect(calls[0]?.actionRepr).toBe('pay({"amount":70,"to":"acme"})');
    expect(calls[1]?.observation).toBe('paid 20 to bolt');
  });
});

function swapAmount(r: LogRecord, amount: number): LogRecord {
  const copy = JSON.parse(JSON.stringify(r)) as { decision: { action: { arguments: Record<string, unknown> } } };
  copy.decision.action.arguments['amount'] = amount;
  return copy as unknown as LogRecord;
}

async function copy(records: readonly LogRecord[]): Promise<InMemoryStore> {
  const store = new InMemoryStore();
  await importRun(store, 'edit', records.map((r) => `${encodeRecord(r)}\n`).join(''));
  return store;
}

describe('edit on approval in a step with several calls, after a crash', () => {
  it('asks the settlement of an edited call with the call as it ran, and the log reads back', async () => {
    const s = setup({ script: [TWO, final('done')], parallel: 2 });
    await run(s.agent, s.request);
    const edited = { kind: 'approve' as const, resultId: 's0.a0.input', arguments: { amount: 70, to: 'acme' } };
    await resume(s.agent, s.request, { input: edited });
    await resume(s.agent, s.request, { input: { kind: 'approve', resultId: 's0.a1.input' } });
    const log = await s.store.readLog('edit');
    const cut = log.slice(
      0,
      log.findIndex((r) => r.kind === 'call_result'),
    );
    const crashed = setup({ script: [final('done')], store: await copy(cut), parallel: 2 });
    const settling = await resume(crashed.agent, crashed.request);
    const { openRequests } = readRunLog(await crashed.store.readLog('edit'));
    expect(openRequests.map((q) => q.resultId)).toEqual(['s0.a0.settle', 's0.a1.settle']);
    expect(settling.pending?.resultId).toBe('s0.a0.settle');
    const first = openRequests[0];
    expect(first?.decision?.action).toMatchObject({ arguments: { amount: 70, to: 'acme' } });
    const again = await crashed.store.readLog('edit');
    await expect(copy(again)).resolves.toBeInstanceOf(InMemoryStore);
  });
});

describe('a reply with a key its kind does not take', () => {
  it('is refused rather than ignored: a misspelt arguments does not approve what the model proposed', async () => {
    const s = setup({ script: [PAY(900), final('done')] });
    await run(s.agent, s.request);
    const before = await s.store.readLog('edit');
    const typo = { kind: 'approve', resultId: 's0.input', argumetns: { amount: 90, to: 'acme' } };
    await expect(resume(s.agent, s.request, { input: typo as never })).rejects.toThrow(/takes no "argumetns"/);
    expect(await s.store.readLog('edit')).toEqual(before);
    expect(s.paid).toEqual([]);
  });
});
