/**
 * A reply the parent carries down reaches the child only while the very request it answers is open:
 * a settlement the child asks again (same resultId) after a crashed retry is asked again, never
 * answered by the old reply.
 */
import { expect, it } from 'vitest';
import {
  agentTool,
  defineAgent,
  InMemoryStore,
  readRunLog,
  resume,
  run,
  silentSink,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type { RunResult, StepWriteRecord, InputRequestRecord, ToolSpec } from '../../../src/core/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';

const SYNTHETIC = { notExecuted: 'The action was not executed.', envError: 'The environment failed.' } as const;
const BASE = {
  budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe' as const,
  observationTemplate: '{observation}',
  toolRenderStyle: 'none' as const,
  cancelGraceMs: 2_000,
};

/** An in-memory store that fails one chosen write of one run, once. */
class CrashOnce extends InMemoryStore {
  next: { readonly method: 'step' | 'inputRequest'; readonly runId: string } | null = null;
  #check(method: string, runId: string): void {
    if (this.next?.method === method && this.next.runId === runId) {
      this.next = null;
      throw new Error(`crash at ${method} of ${runId}`);
    }
  }
  override step(runId: string, rec: StepWriteRecord): Promise<void> {
    this.#check('step', runId);
    return super.step(runId, rec);
  }
  override inputRequest(runId: string, rec: InputRequestRecord): Promise<void> {
    this.#check('inputRequest', runId);
    return super.inputRequest(runId, rec);
  }
}

it('a retry given for a settlement does not answer the same settlement asked again after another crash', async () => {
  const store = new CrashOnce();
  let effects = 0;
  const send: ToolSpec = {
    name: 'send',
    description: 'Send (never twice).',
    parameters: { type: 'object', properties: {} },
    replayPolicy: 'never',
    handler: async () => {
      effects++;
      return 'sent';
    },
  };
  const childTools = ToolRegistry.of([send]);
  const child = defineAgent({
    model: scriptedModel(['{"tool":"send","args":{}}', '{"final":"done"}']),
    interpreter: jsonActionInterpreter(),
    store,
    events: silentSink(),
    syntheticObservations: SYNTHETIC,
    defaults: { tools: childTools, executor: childTools.executor(), ...BASE },
  });
  const delegate = agentTool({
    name: 'delegate',
    description: 'Delegates.',
    parameters: { type: 'object', properties: {} },
    agent: child,
    request: () => ({ goal: 'go' }),
  });
  const parentTools = ToolRegistry.of([delegate]);
  const parent = defineAgent({
    model: scriptedModel(['{"tool":"delegate","args":{}}', '{"final":"parent done"}']),
    interpreter: jsonActionInterpreter(),
    store,
    events: silentSink(),
    syntheticObservations: SYNTHETIC,
    defaults: { tools: parentTools, executor: parentTools.executor(), ...BASE },
  });
  const childId = 'p.s0.action';
  const settle = (r: RunResult | undefined) => r?.pending?.child?.request.kind;
  // The child's step write fails after its `never` tool ran: a resume asks a person to settle it.
  store.next = { method: 'step', runId: childId };
  await expect(run(parent, { runId: 'p', goal: 'go' })).rejects.toThrow('crash at step');
  const asked = await resume(parent, 'p');
  expect([asked.pending?.resultId, settle(asked)]).toEqual(['s0.c0', 'settle']);
  expect(effects).toBe(1);
  // The person says retry; the retried tool runs, and the child's step write fails again.
  store.next = { method: 'step', runId: childId };
  await expect(resume(parent, 'p', { input: { kind: 'retry', resultId: 's0.c0' } })).rejects.toThrow('crash at step');
  expect(effects).toBe(2);
  // The child asks its settlement again; the parent crashes before it writes its own request for it.
  store.next = { method: 'inputRequest', runId: 'p' };
  await expect(resume(parent, 'p')).rejects.toThrow('crash at inputRequest');
  expect(readRunLog(await store.readLog(childId)).pending?.resultId).toBe('s0.settle');
  // The old retry must not answer the new settlement: the person is asked again.
  const again = await resume(parent, 'p');
  expect([again.pending?.resultId, settle(again)]).toEqual(['s0.c1', 'settle']);
  expect(again.pending?.child?.repeat).toBe(1);
  expect(effects).toBe(2);
  const done = await resume(parent, 'p', { input: { kind: 'executed', resultId: 's0.c1', observation: 'sent' } });
  expect(done.finalAnswer).toBe('parent done');
  expect(effects).toBe(2);
});
