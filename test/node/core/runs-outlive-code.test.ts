/**
 * Runs that outlive their code: agent defaults and the goal shorthand, the request kept in the
 * log, resume by run id, and explicit upgrades (docs/upgrades.md).
 */
import { describe, expect, it } from 'vitest';
import {
  decodeRecord,
  defineAgent,
  encodeRecord,
  InMemoryStore,
  InvalidRequestError,
  readRunLog,
  resume,
  run,
  RunIdentityMismatchError,
  ToolRegistry,
  UpgradeRefusedError,
} from '../../../src/core/index.ts';
import type {
  AgentDefaults,
  AgentDefinition,
  LogRecord,
  RunStore,
  ToolSpec,
  UpgradeRecord,
} from '../../../src/core/index.ts';
import { CorruptLogError } from '../../../src/core/errors.ts';
import { canonicalJson } from '../../../src/core/serialization.ts';
import { sha256Hex } from '../../../src/core/snapshot.ts';
import { collectingSink, faultyStore, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { makeTools, SYNTHETIC, text } from './fixtures.ts';

const BUDGET = { maxSteps: 20, maxValidActions: 10, maxContextChars: 100_000 };
const SCRIPT = ['{"tool":"add","args":{"a":1,"b":2}}', '{"tool":"note","args":{"text":"three"}}', '{"final":"done"}'];

/** The standard tools, `note` (never) behind an approval. */
function gatedTools(calls: string[]): ToolSpec[] {
  return makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));
}

const search: ToolSpec = {
  name: 'search',
  description: 'Search.',
  parameters: { type: 'object' },
  replayPolicy: 'safe',
  handler: async () => 'found',
};

function defaultsFor(tools: readonly ToolSpec[], extra: AgentDefaults = {}): AgentDefaults {
  const registry = ToolRegistry.of(tools);
  return {
    tools: registry,
    executor: registry.executor(),
    budget: BUDGET,
    context: { run: [text('system', 'You are version A.')] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1000,
    ...extra,
  };
}

function agentOf(
  store: RunStore,
  defaults: AgentDefaults | undefined,
  script: readonly string[] = SCRIPT,
): AgentDefinition {
  return defineAgent({
    model: scriptedModel([...script]),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: SYNTHETIC,
    ...(defaults ? { defaults } : {}),
  });
}

const approveOf = (resultId: string) => ({ kind: 'approve', resultId }) as const;
const lines = async (store: RunStore, runId = 'run-1'): Promise<string[]> =>
  (await store.readLog(runId)).map((r) => encodeRecord(r));
const upgradesIn = async (store: RunStore): Promise<UpgradeRecord[]> =>
  (await store.readLog('run-1')).filter((r): r is UpgradeRecord => r.kind === 'upgrade');

describe('agent defaults and the goal shorthand', () => {
  it('runs { runId, goal } as a complete call when the defaults give the rest', async () => {
    const calls: string[] = [];
    const store = new InMemoryStore();
    const result = await run(agentOf(store, defaultsFor(makeTools(calls))), { runId: 'run-1', goal: 'Add 1 and 2.' });
    expect(result.stopReason).toBe('final_answer');
    expect(calls).toEqual(['add:{"a":1,"b":2}', 'note:three']);
    const started = (await store.readLog('run-1'))[0];
    expect(started?.kind === 'run_started' && started.snapshot['context']).toEqual({
      run: [text('system', 'You are version A.')],
      goal: [text('user', 'Add 1 and 2.')],
    });
  });

  it('gives the run the identity of the same request written out in full, so either form resumes it', async () => {
    const store = new InMemoryStore();
    const defaults = defaultsFor(makeTools());
    const short = await run(agentOf(store, defaults, [SCRIPT[0] as string]), {
      runId: 'run-1',
      goal: 'Add.',
      budget: { ...BUDGET, maxSteps: 1 },
    });
    expect(short.stopReason).toBe('max_steps');
    const long = {
      ...defaults,
      runId: 'run-1',
      budget: { ...BUDGET, maxSteps: 1 },
      context: { run: defaults.context?.run ?? [], goal: [text('user', 'Add.')] },
    };
    const again = await resume(agentOf(store, undefined), long as Parameters<typeof resume>[1]);
    expect(again.stopReason).toBe('max_steps');
  });

  it('lets the request win where both give a field, and records which fields the defaults filled', async () => {
    const store = new InMemoryStore();
    await run(agentOf(store, defaultsFor(makeTools()), [SCRIPT[0] as string]), {
      runId: 'run-1',
      goal: 'Add.',
      budget: { ...BUDGET, maxSteps: 1 },
      cancelGraceMs: 7,
    });
    const started = (await store.readLog('run-1'))[0];
    if (started?.kind !== 'run_started') throw new Error('no run_started');
    expect(started.snapshot['budget']).toEqual({ ...BUDGET, maxSteps: 1 });
    expect(started.request).toEqual({
      cancelGraceMs: 7,
      defaulted: [
        'context.run',
        'executor',
        'injections',
        'modelBinding',
        'modelReplayPolicy',
        'observationTemplate',
        'toolRenderStyle',
        'tools',
      ],
    });
  });

  it('starts context.run empty when neither the request nor the defaults give it', async () => {
    const store = new InMemoryStore();
    const { context: _c, ...rest } = defaultsFor(makeTools());
    await run(agentOf(store, rest, [SCRIPT[2] as string]), { runId: 'run-1', goal: [text('user', 'Hi.')] });
    const started = (await store.readLog('run-1'))[0];
    expect(started?.kind === 'run_started' && started.snapshot['context']).toEqual({
      run: [],
      goal: [text('user', 'Hi.')],
    });
  });

  it('refuses a goal given twice, a goal of the wrong type, and a run without any goal', async () => {
    const agent = agentOf(new InMemoryStore(), defaultsFor(makeTools()));
    await expect(run(agent, { runId: 'r', goal: 'a', context: { goal: [text('user', 'b')] } })).rejects.toThrow(
      /request\.goal and request\.context\.goal both give the goal/,
    );
    await expect(run(agent, { runId: 'r', goal: 42 as unknown as string })).rejects.toThrow(
      /request\.goal must be a string or an array of messages/,
    );
    await expect(run(agent, { runId: 'r' })).rejects.toThrow(/request\.goal is required/);
  });

  it('refuses at defineAgent a misspelt default, a run id among the defaults, and a malformed default, naming each as defaults.<field>', () => {
    const store = new InMemoryStore();
    const define = (defaults: unknown): unknown => agentOf(store, defaults as AgentDefaults);
    expect(() => define({ ...defaultsFor(makeTools()), budgets: BUDGET })).toThrow(/defaults\.budgets/);
    expect(() => define({ ...defaultsFor(makeTools()), runId: 'x' })).toThrow(/defaults\.runId/);
    const e = (() => {
      try {
        define({ ...defaultsFor(makeTools()), budget: { ...BUDGET, maxSteps: 0 } });
      } catch (x) {
        return x;
      }
      return null;
    })();
    expect(e).toBeInstanceOf(InvalidRequestError);
    expect((e as InvalidRequestError).problems.map((p) => p.path)).toEqual(['defaults.budget.maxSteps']);
  });

  it('names a malformed field the defaults filled as defaults.<field> when a run is started', async () => {
    const agent = agentOf(new InMemoryStore(), { goal: 'g' });
    const e = await run(agent, {
      runId: 'r',
      ...defaultsFor(makeTools()),
      modelReplayPolicy: 'sometimes' as 'safe',
    }).catch((x: unknown) => x);
    expect((e as InvalidRequestError).problems.map((p) => p.path)).toEqual(['request.modelReplayPolicy']);
  });
});

describe('resume by run id', () => {
  it('finishes a run awaiting approval from its id alone: the request comes from the log and the agent', async () => {
    const calls: string[] = [];
    const store = new InMemoryStore();
    const first = await run(agentOf(store, defaultsFor(gatedTools(calls))), {
      runId: 'run-1',
      goal: 'Add, then note.',
      budget: { ...BUDGET, maxSteps: 9 },
    });
    expect(first.stopReason).toBe('awaiting_input');
    const pending = first.pending?.resultId as string;
    // A new process: a fresh agent of the same code, no request in hand.
    const done = await resume(agentOf(store, defaultsFor(gatedTools(calls)), SCRIPT), 'run-1', {
      input: approveOf(pending),
    });
    expect(done.stopReason).toBe('final_answer');
    expect(calls).toEqual(['add:{"a":1,"b":2}', 'note:three']);
    expect(await upgradesIn(store)).toEqual([]);
  });

  it('keeps what the caller gave from the log, while a field the defaults filled follows the agent’s current defaults', async () => {
    const store = new InMemoryStore();
    await run(agentOf(store, defaultsFor(gatedTools([]))), {
      runId: 'run-1',
      goal: 'Go.',
      budget: { ...BUDGET, maxSteps: 9 },
    });
    // The new defaults change the budget (given by the caller: the logged one holds) and the prompt (defaulted: it follows).
    const b = agentOf(
      store,
      defaultsFor(gatedTools([]), {
        budget: { ...BUDGET, maxSteps: 3 },
        context: { run: [text('system', 'You are version B.')] },
      }),
      SCRIPT,
    );
    const e = await resume(b, 'run-1').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunIdentityMismatchError);
    expect((e as RunIdentityMismatchError).differingKeys).toEqual(['context.run.0.content.0.text']);
  });

  it('says a log older than stored requests must be resumed with its request', async () => {
    const store = new InMemoryStore();
    await run(agentOf(store, defaultsFor(gatedTools([]))), { runId: 'run-1', goal: 'Go.' });
    const old = new InMemoryStore();
    for (const rec of await store.readLog('run-1')) {
      const line = encodeRecord(rec)
        .replace(/,"request":\{"cancelGraceMs":\d+,"defaulted":\[[^\]]*\]\}/, '')
        .replaceAll('"v":"1.2"', '"v":"1.1"');
      const back = decodeRecord(line);
      if (back.kind === 'run_started') await old.runStarted('run-1', back);
      else if (back.kind === 'intent') await old.intent('run-1', back);
      else if (back.kind === 'result') await old.result('run-1', back.resultId, back);
      else if (back.kind === 'step') await old.step('run-1', back);
      else if (back.kind === 'input_request') await old.inputRequest('run-1', back);
    }
    const before = await lines(old);
    await expect(resume(agentOf(old, defaultsFor(gatedTools([]))), 'run-1')).rejects.toThrow(
      /record version 1\.1, which predates stored requests: resume it with its request/,
    );
    expect(await lines(old)).toEqual(before);
  });

  it('asks for the tools and executor in the defaults, since the log keeps no code', async () => {
    const store = new InMemoryStore();
    await run(agentOf(store, defaultsFor(gatedTools([]))), { runId: 'run-1', goal: 'Go.' });
    const { tools: _t, executor: _e, ...noCode } = defaultsFor(gatedTools([]));
    const e = await resume(agentOf(store, noCode), 'run-1').catch((x: unknown) => x);
    expect((e as InvalidRequestError).problems.map((p) => p.path)).toEqual(['defaults.tools', 'defaults.executor']);
  });

  it('refuses a run id passed to run, and a resume by id of a run that has no log', async () => {
    const agent = agentOf(new InMemoryStore(), defaultsFor(makeTools()));
    await expect(run(agent, 'run-1' as unknown as Parameters<typeof run>[1])).rejects.toThrow(
      /run takes a request, not a run id/,
    );
    await expect(resume(agent, 'nope')).rejects.toThrow(/nope/);
  });
});

/** A run of version A waiting for approval of `note`, and version B: one tool more, a new system prompt. */
async function waitingRun(calls: string[] = []): Promise<{
  store: InMemoryStore;
  pending: string;
  before: string[];
  b: (script?: readonly string[]) => AgentDefinition;
}> {
  const store = new InMemoryStore();
  const first = await run(agentOf(store, defaultsFor(gatedTools(calls))), { runId: 'run-1', goal: 'Add, then note.' });
  const pending = first.pending?.resultId as string;
  const before = await lines(store);
  const b = (script: readonly string[] = SCRIPT): AgentDefinition =>
    agentOf(
      store,
      defaultsFor([...gatedTools(calls), search], { context: { run: [text('system', 'You are version B.')] } }),
      script,
    );
  return { store, pending, before, b };
}

describe('upgrades', () => {
  it('refuses a changed agent without upgrade, naming the keys and saying how to upgrade; nothing is written', async () => {
    const { store, pending, before, b } = await waitingRun();
    const e = await resume(b(), 'run-1', { input: approveOf(pending) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunIdentityMismatchError);
    expect((e as Error).message).toMatch(
      /differing keys: context\.run\.0\.content\.0\.text, tools\[search\]; to go on under the new parameters, resume with \{ upgrade: \{ reason \} \}/,
    );
    expect(await lines(store)).toEqual(before);
  });

  it('writes one upgrade record before the approved action runs, keeps the steps before it byte for byte, and runs the never action once', async () => {
    const calls: string[] = [];
    const { store, pending, before, b } = await waitingRun(calls);
    const done = await resume(b(), 'run-1', {
      upgrade: { reason: 'deploy 2: search tool' },
      input: approveOf(pending),
    });
    expect(done.stopReason).toBe('final_answer');
    expect(calls).toEqual(['add:{"a":1,"b":2}', 'note:three']);
    const after = await lines(store);
    expect(after.slice(0, before.length)).toEqual(before);
    const [upgrade] = await upgradesIn(store);
    expect(upgrade).toMatchObject({
      kind: 'upgrade',
      v: '1.2',
      stepIndex: 1,
      reason: 'deploy 2: search tool',
      request: { cancelGraceMs: 1000 },
    });
    expect(Object.keys(upgrade?.changes ?? {})).toEqual(['context', 'tools']);
    expect(upgrade?.changes['context']?.value).toEqual({
      run: [text('system', 'You are version B.')],
      goal: [text('user', 'Add, then note.')],
    });
    expect(after[before.length]).toBe(encodeRecord(upgrade as LogRecord));
    // The reply lands after the upgrade and the new driver's mark: the approved step runs under the new identity.
    expect(JSON.parse(after[before.length + 1] as string)).toMatchObject({
      kind: 'resumed',
      stepIndex: upgrade?.stepIndex,
      resolution: 'await_input',
    });
    expect(JSON.parse(after[before.length + 2] as string).kind).toBe('input');
  });

  it('resumes an upgraded run by id under the new identity, and refuses the old code', async () => {
    const { store, pending, b } = await waitingRun();
    await resume(b([]), 'run-1', { upgrade: { reason: 'deploy 2' } });
    expect((await upgradesIn(store)).length).toBe(1);
    const done = await resume(b(), 'run-1', { input: approveOf(pending) });
    expect(done.stopReason).toBe('final_answer');
    expect(readRunLog(await store.readLog('run-1')).upgrades).toHaveLength(1);
    const oldCode = agentOf(store, defaultsFor(gatedTools([])));
    await expect(resume(oldCode, 'run-1')).rejects.toBeInstanceOf(RunIdentityMismatchError);
  });

  it('writes the upgrade of a run awaiting input given no reply, and returns the same awaiting result', async () => {
    const { store, pending, before, b } = await waitingRun();
    const again = await resume(b([]), 'run-1', { upgrade: { reason: 'deploy 2' } });
    expect(again.stopReason).toBe('awaiting_input');
    expect(again.pending?.resultId).toBe(pending);
    expect((await lines(store)).length).toBe(before.length + 1);
    // Asked again: the identity now matches, so nothing more is written.
    await resume(b([]), 'run-1', { upgrade: { reason: 'deploy 2' } });
    expect((await lines(store)).length).toBe(before.length + 1);
  });

  it('writes nothing for an upgrade when nothing changed', async () => {
    const { store, before } = await waitingRun();
    await resume(agentOf(store, defaultsFor(gatedTools([]))), 'run-1', { upgrade: { reason: 'no-op' } });
    expect(await lines(store)).toEqual(before);
  });

  it('refuses to remove the tool the open approval names, or to make it replay-safe, writing nothing', async () => {
    const { store, pending, before } = await waitingRun();
    const without = agentOf(store, defaultsFor(gatedTools([]).filter((t) => t.name !== 'note')));
    const e = await resume(without, 'run-1', { upgrade: { reason: 'drop note' }, input: approveOf(pending) }).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(UpgradeRefusedError);
    expect((e as UpgradeRefusedError).tool).toBe('note');
    expect((e as Error).message).toMatch(/removes tool "note", which the open request of step 1 names/);
    const safe = agentOf(
      store,
      defaultsFor(gatedTools([]).map((t) => (t.name === 'note' ? { ...t, replayPolicy: 'safe' as const } : t))),
    );
    await expect(resume(safe, 'run-1', { upgrade: { reason: 'relax' } })).rejects.toThrow(
      /makes tool "note" replay-safe/,
    );
    expect(await lines(store)).toEqual(before);
  });

  it('refuses to make the tool of an open approval one a person answers, and says why a replay-safe change is refused there', async () => {
    const { store, pending, before } = await waitingRun();
    const answered = gatedTools([]).map((t) =>
      t.name === 'note'
        ? {
            name: t.name,
            description: t.description,
            parameters: t.parameters,
            replayPolicy: 'never' as const,
            answeredBy: 'human' as const,
          }
        : t,
    );
    const e = await resume(agentOf(store, defaultsFor(answered)), 'run-1', {
      upgrade: { reason: 'a person writes notes now' },
      input: approveOf(pending),
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UpgradeRefusedError);
    expect((e as Error).message).toMatch(
      /changes whether a person answers tool "note" while the open request of step 1 asks about it/,
    );
    const safe = agentOf(
      store,
      defaultsFor(gatedTools([]).map((t) => (t.name === 'note' ? { ...t, replayPolicy: 'safe' as const } : t))),
    );
    await expect(resume(safe, 'run-1', { upgrade: { reason: 'relax' } })).rejects.toThrow(
      /a crash while the approved action runs would run it again/,
    );
    expect(await lines(store)).toEqual(before);
  });

  it('never upgrades an ended run', async () => {
    const store = new InMemoryStore();
    await run(agentOf(store, defaultsFor(makeTools())), { runId: 'run-1', goal: 'Go.' });
    const before = await lines(store);
    const b = agentOf(store, defaultsFor([...makeTools(), search]));
    const e = await resume(b, 'run-1', { upgrade: { reason: 'late' } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunIdentityMismatchError);
    expect((e as RunIdentityMismatchError).ended).toBe(true);
    expect((e as Error).message).toMatch(/an ended run is never upgraded/);
    expect(await lines(store)).toEqual(before);
  });

  it('upgrades a run at a step boundary by request, raising its budget, and goes on to the end', async () => {
    const store = new InMemoryStore();
    const defaults = defaultsFor(makeTools());
    const script = ['{"tool":"add","args":{"a":1,"b":2}}', '{"tool":"add","args":{"a":2,"b":2}}', '{"final":"done"}'];
    const first = await run(agentOf(store, defaults, script), {
      runId: 'run-1',
      goal: 'Go.',
      budget: { ...BUDGET, maxValidActions: 1 },
    }).catch((x: unknown) => x);
    expect((first as { stopReason: string }).stopReason).toBe('max_valid_actions');
    // Ended: build a boundary log instead, by dropping run_ended.
    const log = (await store.readLog('run-1')).slice(0, -1);
    const boundary = new InMemoryStore();
    for (const rec of log) await writeRecord(boundary, rec);
    const raised = await resume(
      agentOf(boundary, defaults, script),
      { runId: 'run-1', goal: 'Go.', budget: { ...BUDGET, maxValidActions: 5 } },
      { upgrade: { reason: 'more budget' } },
    );
    expect(raised.stopReason).toBe('final_answer');
    const [upgrade] = await upgradesIn(boundary);
    expect(upgrade?.stepIndex).toBe(1);
    expect(Object.keys(upgrade?.changes ?? {})).toEqual(['budget']);
  });

  it('refuses a log whose upgrade values are not those its hash was written for', async () => {
    const { store, b } = await waitingRun();
    await resume(b([]), 'run-1', { upgrade: { reason: 'deploy 2' } });
    const forged = new InMemoryStore();
    for (const rec of await store.readLog('run-1')) {
      if (rec.kind !== 'upgrade') await writeRecord(forged, rec);
      else
        await writeRecord(forged, {
          ...rec,
          changes: {
            ...rec.changes,
            context: { ...rec.changes['context'], before: null, after: null, value: { run: [], goal: [] } },
          },
        });
    }
    await expect(resume(agentOf(forged, defaultsFor([...gatedTools([]), search])), 'run-1')).rejects.toBeInstanceOf(
      CorruptLogError,
    );
  });

  it('checks the upgrade option: a reason is required, unknown keys are refused, and run does not take it', async () => {
    const { store, b } = await waitingRun();
    await expect(resume(b(), 'run-1', { upgrade: { reason: '' } })).rejects.toThrow(
      /upgrade\.reason must be a non-empty string/,
    );
    await expect(
      resume(b(), 'run-1', { upgrade: { reason: 'x', force: true } as unknown as { reason: string } }),
    ).rejects.toThrow(/force/);
    await expect(
      run(agentOf(store, defaultsFor(makeTools())), { runId: 'run-2', goal: 'g' }, {
        upgrade: { reason: 'x' },
      } as never),
    ).rejects.toThrow(/a new run has nothing to upgrade/);
  });

  it('encodes and decodes an upgrade record unchanged', async () => {
    const { b, store } = await waitingRun();
    await resume(b([]), 'run-1', { upgrade: { reason: 'deploy 2' } });
    const [upgrade] = await upgradesIn(store);
    const line = encodeRecord(upgrade as LogRecord);
    expect(encodeRecord(decodeRecord(line))).toBe(line);
    expect(() => decodeRecord(line.replace('"reason":"deploy 2"', '"reason":7'))).toThrow(
      /upgrade\.stepIndex, reason and snapshotHash are required/,
    );
  });
});

async function writeRecord(store: RunStore, rec: LogRecord): Promise<void> {
  if (rec.kind === 'run_started') await store.runStarted('run-1', rec);
  else if (rec.kind === 'intent') await store.intent('run-1', rec);
  else if (rec.kind === 'result') await store.result('run-1', rec.resultId, rec);
  else if (rec.kind === 'step') await store.step('run-1', rec);
  else if (rec.kind === 'input_request') await store.inputRequest?.('run-1', rec);
  else if (rec.kind === 'input') await store.input?.('run-1', rec);
  else if (rec.kind === 'upgrade') await store.upgrade?.('run-1', rec);
  else if (rec.kind === 'call_result') await store.callResult?.('run-1', rec);
  else if (rec.kind === 'resumed') await store.resumed?.('run-1', rec);
  else await store.runEnded('run-1', rec);
}

describe('a log resumed by id is checked, not trusted', () => {
  it('names a snapshot without a context as a request problem instead of failing with a TypeError', async () => {
    const { store } = await waitingRun();
    const [started, ...rest] = await store.readLog('run-1');
    if (started?.kind !== 'run_started') throw new Error('no run_started');
    const { context: _c, ...snapshot } = started.snapshot;
    const forged = new InMemoryStore();
    await writeRecord(forged, { ...started, snapshot, snapshotHash: await sha256Hex(canonicalJson(snapshot)) });
    for (const rec of rest) await writeRecord(forged, rec);
    const e = await resume(agentOf(forged, defaultsFor(gatedTools([]))), 'run-1').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InvalidRequestError);
    expect((e as Error).message).toMatch(/request\.context\.(run|goal)/);
  });

  it('hashes a key named __proto__ as data, so an upgrade that smuggles one in fails its hash and pollutes nothing', async () => {
    const { store, b } = await waitingRun();
    await resume(b([]), 'run-1', { upgrade: { reason: 'deploy 2' } });
    const log = await store.readLog('run-1');
    const forged = new InMemoryStore();
    for (const rec of log) {
      if (rec.kind !== 'upgrade') await writeRecord(forged, rec);
      else
        await writeRecord(
          forged,
          decodeRecord(
            encodeRecord(rec).replace(
              '"changes":{',
              '"changes":{"__proto__":{"before":null,"after":"x","value":{"polluted":true}},',
            ),
          ),
        );
    }
    // The hash no longer fits the snapshot in force: refused as corrupt, and nothing was polluted.
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"b":1}');
    await expect(resume(agentOf(forged, defaultsFor([...gatedTools([]), search])), 'run-1')).rejects.toBeInstanceOf(
      CorruptLogError,
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('a tool handler knows which action it runs', () => {
  it('gets the run id, step index and result id of the action, the same when the action is replayed', async () => {
    const seen: string[] = [];
    const keyed: ToolSpec = {
      name: 'add',
      description: 'Add.',
      parameters: { type: 'object' },
      replayPolicy: 'safe',
      handler: async (_args, ctx) => {
        seen.push(`${ctx.runId}/${ctx.stepIndex}/${ctx.resultId}`);
        return 'ok';
      },
    };
    const store = new InMemoryStore();
    const script = ['{"tool":"add","args":{}}', '{"final":"done"}'];
    // The step write (the fourth: run_started, model intent, result with action intent, step) crashes.
    const crashing = faultyStore(store, { crashAfterWrites: 3 });
    await expect(
      run(agentOf(crashing, defaultsFor([keyed]), script), { runId: 'run-1', goal: 'Go.' }),
    ).rejects.toThrow();
    const done = await resume(agentOf(store, defaultsFor([keyed]), script), 'run-1');
    expect(done.stopReason).toBe('final_answer');
    expect(seen).toEqual(['run-1/0/s0.action', 'run-1/0/s0.action']);
  });
});
