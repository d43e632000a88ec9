/**
 * `historyWindow` (decision 0084, docs/design/conversation.md#the-history-window): the model is
 * handed the prefix and the last N steps' turns, the run keeps only those steps, a resumed run hands
 * the model what the uninterrupted one did, and a run without it is the run it always was.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { defineAgent, InMemoryStore, readRunLog, resume, run, validateRunRequest } from '../../../src/core/index.ts';
import { stepMessages } from '../../../src/core/internal-entry.ts';
import type { LogRecord, Message, ModelCall, RunRequest, RunStartedRecord } from '../../../src/core/index.ts';
import { crashAtEveryWrite, faultyStore, scriptedModel } from '../../../src/testing/index.ts';
import type { Script } from '../../../src/testing/index.ts';
import { harness, SYNTHETIC, safeTools, timeless } from './fixtures.ts';

/** An endless adder: every reply adds the call's number to itself, so every step adds two turns. */
const ADDING: Script = (call: ModelCall) => `{"tool":"add","args":{"a":${call.callSeq},"b":${call.callSeq}}}`;

/** The step of each history message from step `from` to `to`: two turns a step. */
const turnSteps = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i).flatMap((i) => [i, i]);

/** The history part of a call's messages: what follows the prefix of `prefixLength` messages. */
const historyOf = (messages: readonly Message[], prefixLength: number): readonly Message[] =>
  messages.slice(prefixLength);

describe('historyWindow: what the model is handed', () => {
  it('is the prefix and the turns of the last N steps only, against the same run without a window', async () => {
    const full = harness();
    await run(full.agent, full.request);
    const windowed = harness({ request: { historyWindow: { steps: 2 } } });
    await run(windowed.agent, windowed.request);
    const reference = full.model.calls;
    const prefix = reference[0]?.messages.length ?? 0;
    expect(prefix).toBeGreaterThan(0);
    expect(windowed.model.calls).toHaveLength(reference.length);
    for (const [k, call] of windowed.model.calls.entries()) {
      const all = reference[k]?.messages ?? [];
      // Every step of the standard script before the final answer adds two turns.
      const expected = [...all.slice(0, prefix), ...historyOf(all, prefix).slice(2 * Math.max(0, k - 2))];
      expect(call.messages).toEqual(expected);
    }
  });

  it('is unchanged without a window: the same messages, a snapshot hashed as before the option existed', async () => {
    const h = harness();
    const result = await run(h.agent, h.request);
    const log = await h.store.readLog('run-1');
    const started = log[0] as RunStartedRecord;
    expect(Object.keys(started.snapshot)).not.toContain('historyWindow');
    // The hash this request's snapshot had before `historyWindow` existed.
    expect(started.snapshotHash).toBe('bc1ff25a1c86f76da2a52f00ebcbff79c04d6ddd2f0b43d1c3f3bc32d8aa084c');
    expect(result.trajectory).toHaveLength(result.steps);
    const prefix = h.model.calls[0]?.messages.length ?? 0;
    for (const [k, call] of h.model.calls.entries()) expect(call.messages).toHaveLength(prefix + 2 * k);
  });

  it('is in the identity when given: the snapshot holds it', async () => {
    const h = harness({ request: { historyWindow: { steps: 3 } } });
    await run(h.agent, h.request);
    const started = (await h.store.readLog('run-1'))[0] as RunStartedRecord;
    expect(started.snapshot['historyWindow']).toEqual({ steps: 3 });
  });

  it('stays bounded over a long run, and the context limit measures what the model is handed', async () => {
    const budget = { maxSteps: 300, maxValidActions: 301, maxContextChars: 4_000 };
    const unbounded = harness({ script: ADDING, tools: safeTools(), request: { budget } });
    expect((await run(unbounded.agent, unbounded.request)).stopReason).toBe('context_limit');
    const h = harness({ script: ADDING, tools: safeTools(), request: { budget, historyWindow: { steps: 3 } } });
    const result = await run(h.agent, h.request);
    expect(result.stopReason).toBe('max_steps');
    const prefix = h.model.calls[0]?.messages.length ?? 0;
    const lengths = new Set(h.model.calls.slice(3).map((c) => c.messages.length));
    expect([...lengths]).toEqual([prefix + 6]);
    const first = h.model.calls.at(-1)?.messages[prefix]?.content[0];
    // The last call saw steps 296–298: the assistant turn of step 296 first.
    expect(first).toEqual({ type: 'text', text: '{"tool":"add","args":{"a":296,"b":296}}' });
  });
});

describe('historyWindow: what the run keeps', () => {
  it('RunResult.trajectory holds the last N steps; steps, validActions and usage count the whole run', async () => {
    const h = harness({ script: ADDING, tools: safeTools(), request: { historyWindow: { steps: 3 } } });
    const result = await run(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'max_valid_actions', steps: 10, validActions: 10 });
    expect(result.trajectory.map((s) => s.stepIndex)).toEqual([7, 8, 9]);
    const view = readRunLog(await h.store.readLog('run-1'));
    expect(view.trajectory).toHaveLength(10);
    expect(timeless(result.trajectory)).toEqual(timeless(view.trajectory.slice(-3)));
  });

  it('keeps the step that ends the run: its answer and its error are read from it', async () => {
    const h = harness({ request: { historyWindow: { steps: 1 } } });
    const result = await run(h.agent, h.request);
    expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: '7' });
    expect(result.trajectory.map((s) => s.decision)).toEqual(['final']);
    const failing = harness({
      script: ['{"tool":"add","args":{"a":1,"b":2}}'],
      request: { historyWindow: { steps: 1 } },
    });
    const failed = await run(failing.agent, failing.request);
    expect(failed.stopReason).toBe('model_error');
    expect(failed.error).toBe(failed.trajectory[0]?.observation);
  });

  it('a resume of an ended windowed run returns the same last N steps from the log', async () => {
    const h = harness({ request: { historyWindow: { steps: 2 } } });
    const ended = await run(h.agent, h.request);
    const again = await resume(h.agent, h.request);
    expect(again.trajectory).toHaveLength(2);
    expect(timeless(again.trajectory)).toEqual(timeless(ended.trajectory));
  });

  it('a model caller that changes the array changes nothing: the window is rebuilt from the kept steps', async () => {
    const honest = harness({ script: ADDING, tools: safeTools(), request: { historyWindow: { steps: 2 } } });
    await run(honest.agent, honest.request);
    const seen: Message[][] = [];
    const h = harness({
      script: (call) => {
        seen.push([...call.messages]);
        (call.messages as Message[]).shift();
        return ADDING(call);
      },
      tools: safeTools(),
      request: { historyWindow: { steps: 2 } },
    });
    await run(h.agent, h.request);
    expect(seen).toEqual(honest.model.calls.map((c) => c.messages));
  });
});

describe('historyWindow: resume', () => {
  it('a run crashed at every write resumes to the same model calls as the uninterrupted one', async () => {
    const seen = new Map<number, Set<string>>();
    const report = await crashAtEveryWrite({
      setup: (store) => {
        const h = harness({
          store,
          tools: safeTools(),
          script: (call) => {
            const set = seen.get(call.callSeq) ?? new Set<string>();
            set.add(JSON.stringify(call.messages));
            seen.set(call.callSeq, set);
            return (
              ['{"tool":"add","args":{"a":1,"b":2}}', 'not json', '{"final":"3"}'][Math.min(call.callSeq, 2)] ?? ''
            );
          },
          request: { historyWindow: { steps: 1 }, budget: { maxSteps: 6, maxValidActions: 6, maxContextChars: 1e5 } },
        });
        return { agent: h.agent, request: h.request };
      },
    });
    expect(report.failures).toEqual([]);
    expect(report.cases.length).toBeGreaterThan(5);
    expect([...seen.keys()].sort()).toEqual([0, 1, 2]);
    for (const calls of seen.values()) expect(calls.size).toBe(1);
    expect(report.reference.trajectory).toHaveLength(1);
  });

  it('a crash mid-run resumes with the last N steps, its counters over the whole run', async () => {
    const inner = new InMemoryStore();
    const budget = { maxSteps: 12, maxValidActions: 12, maxContextChars: 1e5 };
    const request = { historyWindow: { steps: 3 }, budget } satisfies Partial<RunRequest>;
    const reference = harness({ script: ADDING, tools: safeTools(), request, runId: 'ref' });
    const uninterrupted = await run(reference.agent, reference.request);
    const crashing = harness({
      script: ADDING,
      tools: safeTools(),
      store: faultyStore(inner, { crashAfterWrites: 20 }),
      request,
    });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow(/simulated crash/);
    const resumed = harness({ script: ADDING, tools: safeTools(), store: inner, request });
    const result = await resume(resumed.agent, resumed.request);
    expect(result).toMatchObject({ steps: 12, validActions: 12, stopReason: uninterrupted.stopReason });
    expect(timeless(result.trajectory)).toEqual(timeless(uninterrupted.trajectory));
    const first = resumed.model.calls[0];
    expect(first?.messages).toEqual(reference.model.calls[first?.callSeq ?? -1]?.messages);
  });

  it('an upgrade changes the window like any key of the identity; resuming without one is refused', async () => {
    const inner = new InMemoryStore();
    const budget = { maxSteps: 8, maxValidActions: 8, maxContextChars: 1e5 };
    const crashing = harness({
      script: ADDING,
      tools: safeTools(),
      store: faultyStore(inner, { crashAfterWrites: 15 }),
      request: { historyWindow: { steps: 2 }, budget },
    });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow(/simulated crash/);
    const wider = harness({
      script: ADDING,
      tools: safeTools(),
      store: inner,
      request: { historyWindow: { steps: 4 }, budget },
    });
    await expect(resume(wider.agent, wider.request)).rejects.toThrow(/historyWindow/);
    const result = await resume(wider.agent, wider.request, { upgrade: { reason: 'a wider window' } });
    expect(result.trajectory).toHaveLength(4);
    const log = await inner.readLog('run-1');
    const upgrade = log.find((r): r is Extract<LogRecord, { kind: 'upgrade' }> => r.kind === 'upgrade');
    expect(Object.keys(upgrade?.changes ?? {})).toEqual(['historyWindow']);
    expect(upgrade?.changes['historyWindow']?.value).toEqual({ steps: 4 });
    const prefix = crashing.model.calls[0]?.messages.length ?? 0;
    expect(wider.model.calls.at(-1)?.messages).toHaveLength(prefix + 8);
    // Resumed again, the ended run's result keeps the window in force (the upgraded one).
    expect((await resume(wider.agent, wider.request)).trajectory).toHaveLength(4);
  });

  it('stepMessages gives back what a windowed call was handed', async () => {
    const h = harness({ script: ADDING, tools: safeTools(), request: { historyWindow: { steps: 2 } } });
    await run(h.agent, h.request);
    const log = await h.store.readLog('run-1');
    const prefix = h.model.calls[0]?.messages.length ?? 0;
    for (const k of [0, 1, 5, 9]) {
      const rebuilt = stepMessages(log, k)?.messages ?? [];
      const handed = h.model.calls[k]?.messages ?? [];
      expect(rebuilt).toHaveLength(handed.length);
      // The history part (the tool section comes back with its schemas' keys sorted: a limit it names).
      expect(rebuilt.slice(prefix).map((m) => m.message)).toEqual(handed.slice(prefix));
      expect(rebuilt.slice(prefix).map((m) => m.step)).toEqual(k < 2 ? turnSteps(0, k) : turnSteps(k - 2, k));
    }
  });
});

describe('historyWindow: checks', () => {
  it.each([
    [{ steps: 0 }, 'request.historyWindow.steps must be a positive integer, got 0'],
    [{ steps: 2.5 }, 'request.historyWindow.steps must be a positive integer, got 2.5'],
    [{ steps: '3' }, 'request.historyWindow.steps must be a positive integer, got "3"'],
    [{}, 'request.historyWindow.steps must be a positive integer, got undefined'],
    [{ steps: 3, max: 4 }, 'request.historyWindow.max'],
    [5, 'request.historyWindow must be { steps } or absent, got a number'],
    [null, 'request.historyWindow must be { steps } or absent, got null'],
  ])('a request with historyWindow %j is refused, naming it', (bad, message) => {
    const h = harness();
    expect(() => validateRunRequest({ ...h.request, historyWindow: bad } as unknown as RunRequest)).toThrow(message);
  });

  it('a misspelt key is named with the key it may mean', () => {
    const h = harness();
    const bad = { ...h.request, historyWindow: { step: 3 } } as unknown as RunRequest;
    expect(() => validateRunRequest(bad)).toThrow(/request\.historyWindow\.step\b.*steps/);
  });

  it("a bad window in an agent's defaults is refused by defineAgent as defaults.historyWindow", () => {
    const h = harness();
    const define = () =>
      defineAgent({
        model: scriptedModel([]),
        interpreter: h.agent.interpreter,
        store: new InMemoryStore(),
        events: h.agent.events,
        syntheticObservations: SYNTHETIC,
        defaults: { historyWindow: { steps: -1 } },
      });
    expect(define).toThrow(/defaults\.historyWindow\.steps must be a positive integer, got -1/);
  });
});

describe('historyWindow: what a resumed run holds', () => {
  it('a resumed windowed run lets go of the records it read and of the steps outside its window while it runs', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let read: WeakRef<readonly LogRecord[]> | null = null;
    let firstStep: WeakRef<object> | null = null;
    class Watched extends InMemoryStore {
      watch = false;
      override async readLog(runId: string): Promise<readonly LogRecord[]> {
        const records = await super.readLog(runId);
        if (this.watch) {
          read = new WeakRef(records);
          const step = records.find((r) => r.kind === 'step');
          firstStep = step?.kind === 'step' ? new WeakRef(step.step) : null;
        }
        return records;
      }
    }
    const inner = new Watched();
    const budget = { maxSteps: 30, maxValidActions: 30, maxContextChars: 1e6 };
    const request = { historyWindow: { steps: 2 }, budget } satisfies Partial<RunRequest>;
    const crashing = harness({
      script: ADDING,
      tools: safeTools(),
      store: faultyStore(inner, { crashAfterWrites: 45 }),
      request,
    });
    await expect(run(crashing.agent, crashing.request)).rejects.toThrow(/simulated crash/);
    inner.watch = true;
    const resumed = harness({ script: ADDING, tools: safeTools(), store: inner, request });
    // The model's second call after the resume waits: the run is then mid-way, its log read long before.
    let reached = (): void => undefined;
    const atCall = new Promise<void>((r) => (reached = r));
    let go = (): void => undefined;
    const gate = new Promise<void>((r) => (go = r));
    let calls = 0;
    const model = {
      params: resumed.agent.model.params,
      call: async (c: ModelCall) => {
        calls += 1;
        if (calls === 2) {
          reached();
          await gate;
        }
        return resumed.agent.model.call(c);
      },
    };
    const running = resume(defineAgent({ ...resumed.agent, model }), resumed.request);
    await atCall;
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(firstStep).not.toBeNull();
    expect((read as WeakRef<object> | null)?.deref()).toBeUndefined();
    expect((firstStep as WeakRef<object> | null)?.deref()).toBeUndefined();
    go();
    const result = await running;
    expect(result).toMatchObject({ steps: 30, validActions: 30, stopReason: 'max_valid_actions' });
  });
});
