/** Adversarial probes of a person in control: stop, fork, edit on approval at their edges. */
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../src/platform-node/index.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import {
  defineAgent,
  forkRun,
  InMemoryStore,
  InvalidRequestError,
  LeaseLostError,
  readRunLog,
  requestStop,
  resume,
  run,
  ToolRegistry,
} from '../../../src/core/index.ts';
import type {
  InputRequestRecord,
  ModelReply,
  ReleaseLease,
  RunRequest,
  RunStore,
  ToolSpec,
  UpgradeRecord,
} from '../../../src/core/index.ts';
import { collectingSink, scriptedModel } from '../../../src/testing/index.ts';
import { harness, makeTools, SYNTHETIC } from '../core/fixtures.ts';
import { family, researchCalls } from '../subagents/family.ts';

const final = (text: string): ModelReply => ({ text, reasoning: null, callId: null });
const toolCalls = (...calls: [string, Record<string, number | string>][]): ModelReply => ({
  text: '',
  reasoning: null,
  callId: null,
  toolCalls: calls.map(([name, args], i) => ({ id: `c${i}`, name, arguments: args })),
});

/** `pay` (never, approved by a person) and `read` (safe): each call's arguments are kept in `ran`. */
function payTools(ran: unknown[]): ToolSpec[] {
  return [
    {
      name: 'pay',
      description: 'Pay an amount to someone.',
      parameters: {
        type: 'object',
        properties: { amount: { type: 'integer', minimum: 1, maximum: 1000 }, to: { type: 'string' } },
        required: ['amount', 'to'],
        additionalProperties: false,
      },
      replayPolicy: 'never',
      needsApproval: true,
      handler: async (args) => {
        ran.push(args);
        return `paid ${String(args['amount'])}`;
      },
    },
  ];
}

/** An agent on native tool calls over `store`. */
function nativeAgent(opts: {
  readonly store: RunStore;
  readonly script: readonly ModelReply[];
  readonly tools: ToolSpec[];
  readonly parallel?: number;
  readonly runId?: string;
}) {
  const model = scriptedModel(opts.script);
  const registry = ToolRegistry.of(opts.tools);
  const agent = defineAgent({
    model,
    interpreter: nativeToolInterpreter('test'),
    store: opts.store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
  });
  const request: RunRequest = {
    runId: opts.runId ?? 'run-1',
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
  return { agent, request, model };
}

/** An in-memory store whose input request write (the first `slow` picks) waits until the test lets it land. */
class SlowAskStore extends InMemoryStore {
  entered!: Promise<void>;
  #enter!: () => void;
  #go!: () => void;
  #gate: Promise<void>;
  readonly #slow: (runId: string, rec: InputRequestRecord) => boolean;
  constructor(slow: (runId: string, rec: InputRequestRecord) => boolean = () => true) {
    super();
    this.#slow = slow;
    this.entered = new Promise((r) => (this.#enter = r));
    this.#gate = new Promise((r) => (this.#go = r));
  }
  go(): void {
    this.#go();
  }
  readonly #written = new Map<string, () => void>();
  /** Resolves once run `runId`'s input request `resultId` has landed. */
  written(runId: string, resultId: string): Promise<void> {
    return new Promise((r) => this.#written.set(`${runId} ${resultId}`, r));
  }
  override async inputRequest(runId: string, rec: InputRequestRecord): Promise<void> {
    if (this.#slow(runId, rec)) {
      this.#enter();
      await this.#gate;
    }
    await super.inputRequest(runId, rec);
    this.#written.get(`${runId} ${rec.resultId}`)?.();
  }
}

describe('a stop at every point of a step', () => {
  it('a stop asked while the run writes its approval request ends the run cancelled with the reason', async () => {
    const calls: string[] = [];
    const tools = makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const store = new SlowAskStore();
    const h = harness({ tools, script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'], calls, store });
    const running = run(h.agent, h.request);
    await store.entered;
    await requestStop(store, 'run-1', 'no longer wanted');
    store.go();
    const result = await running;
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'no longer wanted' } });
    expect(readRunLog(await store.readLog('run-1')).ended?.stopRequest).toEqual({ reason: 'no longer wanted' });
  });

  it('a stop asked while a step with several calls writes its approval requests ends the run cancelled', async () => {
    const ran: unknown[] = [];
    const store = new SlowAskStore();
    const script = [toolCalls(['pay', { amount: 1, to: 'a' }], ['pay', { amount: 2, to: 'b' }]), final('done')];
    const a = nativeAgent({ store, script, tools: payTools(ran), parallel: 2 });
    const running = run(a.agent, a.request);
    await store.entered;
    await requestStop(store, 'run-1', 'stop paying');
    store.go();
    const result = await running;
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'stop paying' } });
    expect(ran).toEqual([]);
    expect(readRunLog(await store.readLog('run-1')).ended?.stopRequest).toEqual({ reason: 'stop paying' });
  });

  it("a stop asked while the parent writes its sub-agent's question ends the parent cancelled with the reason", async () => {
    const store = new SlowAskStore((_runId, rec) => rec.request.kind === 'child');
    const f = family({ store });
    const running = run(f.parent, { runId: 'p', goal: 'find it' });
    await store.entered;
    await requestStop(store, 'p', 'enough research');
    store.go();
    const result = await running;
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'enough research' } });
    expect(f.notes).toEqual([]);
    expect(readRunLog(await store.readLog('p')).ended?.stopRequest).toEqual({ reason: 'enough research' });
    // The child's question was written before the stop: no one will be shown it, so the child ends too.
    expect(readRunLog(await store.readLog('p.s0.action')).ended?.stopReason).toBe('cancelled');
  });
});

/** An in-memory store whose `upgrade` write waits until the test lets it land. */
class SlowUpgradeStore extends InMemoryStore {
  readonly entered: Promise<void>;
  #enter!: () => void;
  #go!: () => void;
  readonly #gate = new Promise<void>((r) => (this.#go = r));
  constructor() {
    super();
    this.entered = new Promise((r) => (this.#enter = r));
  }
  go(): void {
    this.#go();
  }
  override async upgrade(runId: string, rec: UpgradeRecord): Promise<void> {
    this.#enter();
    await this.#gate;
    return super.upgrade(runId, rec);
  }
}

describe('a stop during an upgrade', () => {
  it('a stop asked while a run awaiting approval is upgraded ends it cancelled, not left awaiting', async () => {
    const calls: string[] = [];
    const tools = makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const store = new SlowUpgradeStore();
    const h = harness({ tools, script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'], calls, store });
    expect((await run(h.agent, h.request)).stopReason).toBe('awaiting_input');
    const v2 = { ...h.request, modelBinding: { user: 'someone else' } };
    const upgrading = resume(h.agent, v2, { upgrade: { reason: 'deploy 2' } });
    await store.entered;
    await requestStop(store, 'run-1', 'called off');
    store.go();
    const result = await upgrading;
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'called off' } });
    expect(calls).toEqual([]);
    expect(readRunLog(await store.readLog('run-1')).ended?.stopRequest).toEqual({ reason: 'called off' });
  });
});

describe('a stop of a parent whose sub-agent waits for a person', () => {
  it('ends the waiting child cancelled too when the stop is found at the next resume', async () => {
    const f = family();
    expect((await run(f.parent, { runId: 'p', goal: 'find it' })).pending?.resultId).toBe('s0.c0');
    await requestStop(f.store, 'p', 'halt');
    const result = await resume(f.parent, 'p', { input: { kind: 'approve', resultId: 's0.c0' } });
    expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'halt' } });
    expect(readRunLog(await f.store.readLog('p.s0.action')).ended?.stopReason).toBe('cancelled');
    // Nothing the child asked can be approved on its own afterwards.
    await resume(f.child, 'p.s0.action', { input: { kind: 'approve', resultId: 's0.input' } }).catch(() => null);
    expect(f.notes).toEqual([]);
  });

  it('ends a waiting child of a step with several calls cancelled when the stop lands while another runs', async () => {
    // The second child's question is written slowly; the stop lands then, while the first child waits.
    const store = new SlowAskStore((runId) => runId === 'p.s0.a1');
    const f = family({
      store,
      native: { replies: [researchCalls('one?', 'two?'), final('done')], parallelToolCalls: 2 },
    });
    const firstAsked = store.written('p', 's0.a0.c0');
    const running = run(f.parent, { runId: 'p', goal: 'find both' });
    await Promise.all([store.entered, firstAsked]);
    await requestStop(store, 'p', 'halt');
    store.go();
    expect(await running).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason: 'halt' } });
    expect(readRunLog(await store.readLog('p.s0.a0')).ended?.stopReason).toBe('cancelled');
    expect(readRunLog(await store.readLog('p.s0.a1')).ended?.stopReason).toBe('cancelled');
    expect(f.notes).toEqual([]);
  });
});

/** An in-memory store whose lease the test can lose, and whose `op` write loses it as it lands. */
class LosingStore extends InMemoryStore {
  readonly #lost = new AbortController();
  readonly #op: 'inputRequest' | 'upgrade';
  constructor(op: 'inputRequest' | 'upgrade') {
    super();
    this.#op = op;
  }
  override async acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    const release = await super.acquire(runId, opts);
    return Object.assign(() => release(), { lost: this.#lost.signal });
  }
  #lose(): void {
    this.#lost.abort(new LeaseLostError('run-1', 'another driver took the run over'));
  }
  override async inputRequest(runId: string, rec: InputRequestRecord): Promise<void> {
    await super.inputRequest(runId, rec);
    if (this.#op === 'inputRequest') this.#lose();
  }
  override async upgrade(runId: string, rec: UpgradeRecord): Promise<void> {
    await super.upgrade(runId, rec);
    if (this.#op === 'upgrade') this.#lose();
  }
}

describe('a lease lost as the run pauses', () => {
  it('a lease lost while the run writes its approval request rejects with LeaseLostError, not awaiting input', async () => {
    const tools = makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const store = new LosingStore('inputRequest');
    const h = harness({ tools, script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'], store });
    await expect(run(h.agent, h.request)).rejects.toBeInstanceOf(LeaseLostError);
    expect(readRunLog(await store.readLog('run-1')).ended).toBeNull();
  });

  it('a lease lost while a run awaiting approval is upgraded rejects with LeaseLostError', async () => {
    const tools = makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const store = new LosingStore('upgrade');
    const h = harness({ tools, script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'], store });
    expect((await run(h.agent, h.request)).stopReason).toBe('awaiting_input');
    const v2 = { ...h.request, modelBinding: { user: 'someone else' } };
    await expect(resume(h.agent, v2, { upgrade: { reason: 'deploy 2' } })).rejects.toBeInstanceOf(LeaseLostError);
  });
});

describe('forkRun into a store that is not one', () => {
  it('refuses an into that lacks the methods of a store, or is null, naming what is missing and writing nothing', async () => {
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'] });
    await run(h.agent, h.request);
    const readOnly = { readLog: () => Promise.resolve([]) } as unknown as RunStore;
    const refused = forkRun(h.store, 'run-1', { atStep: 1, newRunId: 'f', into: readOnly });
    await expect(refused).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(refused).rejects.toThrow(/runStarted/);
    const nothing = forkRun(h.store, 'run-1', { atStep: 1, newRunId: 'g', into: null as unknown as RunStore });
    await expect(nothing).rejects.toBeInstanceOf(InvalidRequestError);
    expect(await h.store.readLog('g')).toEqual([]);
  });
});

describe('a stop of a FileStore run with a long id', () => {
  it('keeps its reason, lone surrogates and all, however long the run id', async (test) => {
    const store = new FileStore({ dir: await tempDir('polyloop-long-stop-', test) });
    const runId = 'r'.repeat(70_000);
    const calls: string[] = [];
    const tools = makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
    const h = harness({
      tools,
      script: ['{"tool":"note","args":{"text":"x"}}', '{"final":"done"}'],
      calls,
      store,
      runId,
    });
    expect((await run(h.agent, h.request)).stopReason).toBe('awaiting_input');
    const reason = `${'\ud800'.repeat(1_000)}${'z'.repeat(1_000)}`;
    await requestStop(store, runId, reason);
    const result = await resume(h.agent, h.request, { input: { kind: 'approve', resultId: 's0.input' } });
    expect(result.stopRequest?.reason === reason).toBe(true);
    expect(calls).toEqual([]);
  });
});

describe("a store whose lease's lost is no AbortSignal", () => {
  it('runs to its end as a store without one: a lost with no way to stop listening is ignored', async () => {
    const inner = new InMemoryStore();
    const store = new Proxy(inner, {
      get(target, key) {
        if (key === 'acquire')
          return async (runId: string, opts: { signal?: AbortSignal }) => {
            const release = await target.acquire(runId, opts);
            const lost = { aborted: false, addEventListener: () => undefined };
            return Object.assign(() => release(), { lost }) as unknown as ReleaseLease;
          };
        const v = Reflect.get(target, key, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const h = harness({ script: ['{"tool":"add","args":{"a":1,"b":2}}', '{"final":"3"}'], store });
    expect(await run(h.agent, h.request)).toMatchObject({ stopReason: 'final_answer', finalAnswer: '3' });
  });
});
