/**
 * The {@link EventSink} contract suite: every event type delivered — frozen, as the library
 * hands them over — settles without a throw, and the sink leaves the events as they were.
 * @module
 */
import { checkOptionKeys } from '../../core/internal-entry.ts';
import type { EventSink, RunEvent, RunEventType } from '../../core/index.ts';
import type { OptionKeys } from '../../core/internal-entry.ts';
import { deepFreeze, equal, noProblem, paramsProblem, snapshot } from './check.ts';
import type { ContractCase, ContractSuite } from './check.ts';
import { stepRecord } from './records.ts';
import { valueWithin } from './seam-calls.ts';

/** Options of {@link eventSinkContract}. */
export type EventSinkContractOptions = {
  /** Names the suite (`"EventSink contract: <name>"`). */
  readonly name: string;
  /** Builds a fresh sink; called once per case. */
  readonly makeSink: () => EventSink | Promise<EventSink>;
  /** How long one delivery may take, in ms (default 5,000): the run awaits every delivery. */
  readonly deliverWithinMs?: number;
};

const KNOWN: OptionKeys<EventSinkContractOptions> = { name: true, makeSink: true, deliverWithinMs: true };

const runId = 'contract-run';

/** One event of every type, in the order a run emits them; typed by tag so a new type is a compile error here. */
function everyEvent(): RunEvent[] {
  const events: { readonly [T in RunEventType]: Extract<RunEvent, { type: T }> } = {
    run_started: { type: 'run_started', runId, resumed: false, fromStep: 0 },
    step_started: { type: 'step_started', runId, stepIndex: 0 },
    model_call_started: {
      type: 'model_call_started',
      runId,
      stepIndex: 0,
      callSeq: 0,
      resultId: 's0.model',
      replayed: false,
      replayPolicy: 'safe',
      model: 'contract-model',
    },
    model_delta: { type: 'model_delta', runId, stepIndex: 0, callSeq: 0, delta: 'Hel' },
    model_call_finished: {
      type: 'model_call_finished',
      runId,
      stepIndex: 0,
      callSeq: 0,
      callId: 'c0',
      error: null,
      usage: { inputTokens: 12, outputTokens: 3 },
      finishReason: 'tool_calls',
    },
    decision: { type: 'decision', runId, stepIndex: 0, decision: 'action', summary: 'echo({"text":"hi"})' },
    action_started: {
      type: 'action_started',
      runId,
      stepIndex: 0,
      resultId: 's0.action',
      action: { kind: 'tool_call', name: 'echo', arguments: { text: 'hi' } },
      replayed: false,
      replayPolicy: 'safe',
    },
    action_finished: {
      type: 'action_finished',
      runId,
      stepIndex: 0,
      resultId: 's0.action',
      outcome: {
        status: 'executed',
        observation: 'hi',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      },
    },
    step_finished: { type: 'step_finished', runId, stepIndex: 0, step: stepRecord(0) },
    input_requested: {
      type: 'input_requested',
      runId,
      stepIndex: 1,
      resultId: 's1.input',
      request: {
        resultId: 's1.input',
        stepIndex: 1,
        kind: 'approval',
        target: 'action',
        decision: {
          kind: 'action',
          action: { kind: 'tool_call', name: 'echo', arguments: { text: 'again' } },
          trajectoryRepr: 'echo({"text":"again"})',
          historyText: 'echo again',
        },
      },
    },
    input_received: { type: 'input_received', runId, stepIndex: 1, resultId: 's1.input', kind: 'approve' },
    warning: {
      type: 'warning',
      runId,
      code: 'torn_tail',
      message: 'the last record was torn and was dropped',
      stepIndex: 1,
    },
    run_ended: { type: 'run_ended', runId, stopReason: 'final_answer', finalAnswer: 'hi', steps: 1, validActions: 1 },
  };
  return Object.values(events);
}

async function deliverChecked(sink: EventSink, event: RunEvent, ms: number): Promise<void> {
  await valueWithin(() => sink.deliver(event), ms, {
    pending: () => `deliver(${event.type}) did not settle within ${ms} ms; the run waits for every delivery`,
    rejected: (e) =>
      `deliver(${event.type}) failed with ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)} ` +
      '(a run would count it in eventDeliveryFailures)',
  });
}

function cases(make: () => Promise<EventSink>, ms: number): ContractCase[] {
  return [
    {
      name: 'has params of flat scalar values',
      run: async () => noProblem(paramsProblem((await make()).params), 'params'),
    },
    {
      name: 'accepts every event type, frozen as the library delivers it, and settles each delivery',
      run: async () => {
        const sink = await make();
        for (const event of everyEvent()) await deliverChecked(sink, deepFreeze(event), ms);
      },
    },
    {
      name: 'does not change the events it is given',
      run: async () => {
        const sink = await make();
        for (const event of everyEvent()) {
          const before = snapshot(event);
          await deliverChecked(sink, event, ms);
          equal(event, before, `the ${event.type} event after deliver()`);
        }
      },
    },
  ];
}

/**
 * The cases every {@link EventSink} must pass, over one event of every type.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { collectingSink, eventSinkContract } from 'polyloop/testing';
 * const suite = eventSinkContract({ name: 'collecting', makeSink: () => collectingSink() });
 * describe(suite.name, () => { for (const c of suite.cases) it(c.name, c.run); });
 */
export function eventSinkContract(options: EventSinkContractOptions): ContractSuite {
  checkOptionKeys(options, KNOWN, 'eventSinkContract');
  return {
    name: `EventSink contract: ${options.name}`,
    cases: cases(async () => options.makeSink(), options.deliverWithinMs ?? 5000),
  };
}
