/**
 * The contract suites catch what they claim to: each broken seam below fails exactly the case
 * written for its fault, with a ContractViolationError that says what went wrong. Without these,
 * a suite whose checks were vacuous would pass everything.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryStore, RunLockedError, ToolRegistry } from '../../../src/core/index.ts';
import type {
  ActionExecutor,
  DecisionInterpreter,
  EventSink,
  ModelCaller,
  ModelReply,
  ReleaseLease,
  RunStore,
} from '../../../src/core/index.ts';
import {
  actionExecutorContract,
  collectingSink,
  ContractViolationError,
  decisionInterpreterContract,
  eventSinkContract,
  jsonActionInterpreter,
  modelCallerContract,
  runStoreContract,
  scriptedModel,
} from '../../../src/testing/index.ts';
import type { ContractSuite } from '../../../src/testing/index.ts';

/** Run the one case whose name contains `part`; return the violation it rejected with. */
async function violation(suite: ContractSuite, part: string): Promise<ContractViolationError> {
  const found = suite.cases.filter((c) => c.name.includes(part));
  expect(
    found.map((c) => c.name),
    `cases named like ${JSON.stringify(part)}`,
  ).toHaveLength(1);
  const error = await (found[0] as (typeof found)[number]).run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `case "${found[0]?.name}" should fail`).toBeInstanceOf(ContractViolationError);
  return error as ContractViolationError;
}

const passing = async (suite: ContractSuite): Promise<void> => {
  for (const c of suite.cases) await c.run();
};

describe('RunStore contract against broken stores', () => {
  it('fails a store that reads a log back out of write order', async () => {
    const reversing = (): RunStore => {
      const store = new InMemoryStore();
      const readLog = store.readLog.bind(store);
      return Object.assign(store, { readLog: async (id: string) => [...(await readLog(id))].reverse() });
    };
    const e = await violation(
      runStoreContract({ name: 'reversing', makeStore: reversing, lease: 'none' }),
      'in write order',
    );
    expect(e.message).toContain('readLog after a full run');
    expect(e.showDiff).toBe(true);
  });

  it('fails a store whose stale release frees the lease of the next holder', async () => {
    const naive = (): RunStore => {
      const held = new Set<string>();
      const store = new InMemoryStore() as RunStore;
      return Object.assign(store, {
        acquire: async (runId: string): Promise<ReleaseLease> => {
          if (held.has(runId)) throw new RunLockedError(runId, 'held');
          held.add(runId);
          return async () => void held.delete(runId);
        },
      });
    };
    const e = await violation(runStoreContract({ name: 'naive lease', makeStore: naive }), 'never frees a lease');
    expect(e.message).toContain('two drivers would hold it');
  });

  it('fails a store that takes a lease with an aborted signal, and one declared to wait that refuses', async () => {
    const e = await violation(
      runStoreContract({ name: 'declared waiting', makeStore: () => new InMemoryStore(), lease: 'waits' }),
      'exactly one driver',
    );
    expect(e.message).toContain('declared to wait');
    const ignoring = (): RunStore => {
      const store = new InMemoryStore();
      const acquire = store.acquire.bind(store);
      return Object.assign(store, { acquire: (runId: string) => acquire(runId, {}) });
    };
    const aborted = await violation(runStoreContract({ name: 'ignores abort', makeStore: ignoring }), 'aborted signal');
    expect(aborted.message).toContain('acquire with an aborted signal');
  });

  it('passes InMemoryStore, whose lease refuses', async () => {
    await passing(runStoreContract({ name: 'InMemoryStore', makeStore: () => new InMemoryStore(), lease: 'refuses' }));
  });
});

describe('ModelCaller contract against broken models', () => {
  const suiteOf = (model: (scenario: 'answer' | 'hang') => ModelCaller) =>
    modelCallerContract({ name: 'broken', makeModel: model, abortWithinMs: 100 });
  const fixed = (reply: unknown, params: Record<string, string> = { model: 'm' }): ModelCaller => ({
    params,
    call: async () => reply as ModelReply,
  });

  it('fails a model without params.model', async () => {
    expect(
      (
        await violation(
          suiteOf(() => fixed({ callId: null, text: 'hi', reasoning: null }, { name: 'x' })),
          'has params',
        )
      ).message,
    ).toContain('params.model');
  });

  it('fails replies of the wrong shape: an empty callId, text not a string, a tool call without an id', async () => {
    expect(
      (
        await violation(
          suiteOf(() => fixed({ callId: '', text: 'hi', reasoning: null })),
          'plain conversation',
        )
      ).message,
    ).toContain('callId must not be ""');
    expect(
      (
        await violation(
          suiteOf(() => fixed({ callId: 'c', text: null, reasoning: null })),
          'plain conversation',
        )
      ).message,
    ).toContain('text must be a string');
    const noId = { callId: 'c', text: '', reasoning: null, toolCalls: [{ name: 'add', arguments: {} }] };
    expect(
      (
        await violation(
          suiteOf(() => fixed(noId)),
          'answered tool call',
        )
      ).message,
    ).toContain('toolCalls[0].id');
  });

  it('fails a model that writes to the messages it was lent', async () => {
    const pushing: ModelCaller = {
      params: { model: 'm' },
      call: async (c) => ((c.messages as unknown[]).push('x'), { callId: null, text: 'hi', reasoning: null }),
    };
    expect(
      (
        await violation(
          suiteOf(() => pushing),
          'does not change the messages',
        )
      ).message,
    ).toContain('rejected');
  });

  it('fails a model that ignores abort, and one that rejects with its own error instead of signal.reason', async () => {
    const hanging: ModelCaller = { params: { model: 'm' }, call: () => new Promise<never>(() => undefined) };
    expect(
      (
        await violation(
          suiteOf(() => hanging),
          'aborted during the call',
        )
      ).message,
    ).toContain('still pending 100 ms after the abort');
    const own: ModelCaller = {
      params: { model: 'm' },
      call: (c) => new Promise((_, reject) => c.signal.addEventListener('abort', () => reject(new Error('aborted')))),
    };
    expect(
      (
        await violation(
          suiteOf(() => own),
          'aborted during the call',
        )
      ).message,
    ).toContain('not with signal.reason itself');
    expect(
      (
        await violation(
          suiteOf(() => fixed({ callId: null, text: 'hi', reasoning: null })),
          'already aborted',
        )
      ).message,
    ).toContain('resolved after the abort');
  });

  it('fails a hang scenario that answers at once, saying the factory is wrong', async () => {
    const e = await violation(
      suiteOf(() => scriptedModel(['hi'])),
      'aborted during the call',
    );
    expect(e.message).toContain("makeModel('hang')");
  });
});

describe('DecisionInterpreter contract against broken interpreters', () => {
  const suiteOf = (make: () => DecisionInterpreter) =>
    decisionInterpreterContract({ name: 'broken', makeInterpreter: make });
  const json = jsonActionInterpreter();

  it('fails an interpreter that throws on garbage text', async () => {
    const strict: DecisionInterpreter = {
      params: {},
      interpret: (r) => (JSON.parse(r.text), { kind: 'final', answer: r.text, historyText: r.text }),
    };
    expect(
      (
        await violation(
          suiteOf(() => strict),
          'never a throw',
        )
      ).message,
    ).toContain('threw SyntaxError');
  });

  it('fails an interpreter that returns a promise, or an invalid decision with an empty explanation', async () => {
    const asyncOne = {
      params: {},
      interpret: async (r: ModelReply) => json.interpret(r, { tools: ToolRegistry.of([]) }),
    } as unknown as DecisionInterpreter;
    expect(
      (
        await violation(
          suiteOf(() => asyncOne),
          'never a throw',
        )
      ).message,
    ).toContain('must be synchronous');
    const mute: DecisionInterpreter = {
      params: {},
      interpret: (r) => ({ kind: 'invalid', explanation: '', historyText: r.text }),
    };
    expect(
      (
        await violation(
          suiteOf(() => mute),
          'never a throw',
        )
      ).message,
    ).toContain('explanation');
  });

  it('fails an interpreter with hidden state, and one that writes to the reply', async () => {
    let n = 0;
    const counting: DecisionInterpreter = {
      params: {},
      interpret: () => ({ kind: 'final', answer: String(n++), historyText: '' }),
    };
    expect(
      (
        await violation(
          suiteOf(() => counting),
          'is pure',
        )
      ).message,
    ).toContain('a second time');
    const trimming: DecisionInterpreter = {
      params: {},
      interpret: (r) => (
        ((r as { text: string }).text = r.text.trim()), { kind: 'final', answer: r.text, historyText: r.text }
      ),
    };
    expect(
      (
        await violation(
          suiteOf(() => trimming),
          'does not change the reply',
        )
      ).message,
    ).toMatch(/the reply after|threw TypeError/);
  });

  it('fails an interpreter that acts on one of several tool calls', async () => {
    const first: DecisionInterpreter = {
      params: {},
      interpret: (r) => {
        const call = r.toolCalls?.[0];
        if (!call) return { kind: 'final', answer: r.text, historyText: r.text };
        return {
          kind: 'action',
          action: { kind: 'tool_call', name: call.name, arguments: call.arguments },
          trajectoryRepr: call.name,
          historyText: '',
        };
      },
    };
    expect(
      (
        await violation(
          suiteOf(() => first),
          'several tool calls',
        )
      ).message,
    ).toContain('must be invalid, got action');
  });
});

describe('ActionExecutor contract against broken executors', () => {
  const valid = { kind: 'tool_call', name: 'add', arguments: { a: 1, b: 2 } } as const;
  const ok = {
    status: 'executed',
    observation: '3',
    observationIsSynthetic: false,
    envReportedCompletion: false,
    observationTruncatedChars: 0,
  } as const;
  const suiteOf = (executor: ActionExecutor) =>
    actionExecutorContract({
      name: 'broken',
      makeExecutor: () => executor,
      validAction: valid,
      slowAction: valid,
      abortWithinMs: 100,
    });

  it('fails an outcome with a negative observationTruncatedChars or an unknown status', async () => {
    expect(
      (await violation(suiteOf({ execute: async () => ({ ...ok, observationTruncatedChars: -1 }) }), 'valid action'))
        .message,
    ).toContain('non-negative integer');
    expect(
      (await violation(suiteOf({ execute: async () => ({ ...ok, status: 'done' as never }) }), 'valid action')).message,
    ).toContain('status must be');
  });

  it('fails an executor that throws for an action it does not know', async () => {
    const picky: ActionExecutor = {
      execute: async (a) =>
        a.kind === 'tool_call' && a.name === 'add' ? ok : Promise.reject(new Error('no such tool')),
    };
    expect((await violation(suiteOf(picky), 'unknown action')).message).toContain(
      'resolves with an outcome for every action',
    );
  });

  it('fails an executor that ignores abort', async () => {
    expect(
      (await violation(suiteOf({ execute: () => new Promise(() => undefined) }), 'aborted during execution')).message,
    ).toContain('still pending');
    expect((await violation(suiteOf({ execute: async () => ok }), 'already aborted')).message).toContain(
      'resolved after the abort',
    );
  });
});

describe('EventSink contract against broken sinks', () => {
  const suiteOf = (sink: EventSink) =>
    eventSinkContract({ name: 'broken', makeSink: () => sink, deliverWithinMs: 100 });

  it('fails a sink that throws on some event type', async () => {
    expect((await violation(suiteOf(collectingSink({ failOn: ['warning'] })), 'every event type')).message).toContain(
      'deliver(warning) failed',
    );
  });

  it("fails a sink that changes an event's step", async () => {
    const bumping: EventSink = {
      params: {},
      deliver: (e) => void ('stepIndex' in e && ((e as { stepIndex: number }).stepIndex += 1)),
    };
    expect((await violation(suiteOf(bumping), 'does not change the events')).message).toContain('after deliver()');
  });

  it('fails a sink whose delivery never settles', async () => {
    expect(
      (await violation(suiteOf({ params: {}, deliver: () => new Promise(() => undefined) }), 'every event type'))
        .message,
    ).toContain('did not settle within 100 ms');
  });
});
