/** FileStore and human input (SPEC §9): the two barriers, their tail discipline, and the §9 law over real files. */
import { appendFile, open, readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineAgent, InMemoryStore, RECORD_VERSION, ToolRegistry } from '../../../src/core/index.ts';
import type { InputReply, InputRequest, RunRequest, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { collectingSink, crashAtEveryWrite, jsonActionInterpreter, runStoreContract, scriptedModel } from '../../../src/testing/index.ts';
import type { ContractSuite } from '../../../src/testing/index.ts';
import { modelIntent, modelResult, started } from '../../contract/run-store.contract.ts';
import { tempDir } from './helpers.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0)) await c();
});

async function freshDir(): Promise<string> {
  const t = await tempDir('polyloop-input-');
  cleanups.push(t.cleanup);
  return t.dir;
}

const quiet = (): void => undefined;
const v = RECORD_VERSION;
const approvalRequest = { kind: 'input_request', v, stepIndex: 0, resultId: 's0.input', request: { kind: 'approval', target: 'model_call', decision: null }, requestedAt: '2026-01-01T00:00:00.000Z' } as const;
const approveReply = { kind: 'input', v, stepIndex: 0, resultId: 's0.input', reply: { kind: 'approve', resultId: 's0.input' }, receivedAt: '2026-01-01T00:00:01.000Z' } as const;

/** Counts `fsync` calls on every file handle while `fn` runs. */
async function syncsDuring(fn: () => Promise<void>): Promise<number> {
  const probe = await open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const spy = vi.spyOn(proto, 'sync');
  try {
    await fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('FileStore input records', () => {
  it('makes inputRequest and input barriers: each resolves after an fsync of the log, as intent does and result does not', async () => {
    const store = new FileStore({ dir: await freshDir(), onWarning: quiet });
    await store.runStarted('r', started('r'));
    await store.intent('r', modelIntent(0));
    expect(await syncsDuring(() => store.result('r', 's0.model', modelResult(0)))).toBe(0);
    expect(await syncsDuring(() => store.inputRequest('r', approvalRequest))).toBeGreaterThanOrEqual(1);
    expect(await syncsDuring(() => store.input('r', approveReply))).toBeGreaterThanOrEqual(1);
    expect((await store.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent', 'result', 'input_request', 'input']);
  });

  it('cuts a torn tail off before writing a reply, so the reply stands on its own line and reads back', async () => {
    const dir = await freshDir();
    const warnings: string[] = [];
    const first = new FileStore({ dir, onWarning: quiet });
    await first.runStarted('r', started('r'));
    await first.inputRequest('r', approvalRequest);
    await appendFile(first.logPath('r'), '{"kind":"input","v":"1.1","stepIn');
    const second = new FileStore({ dir, onWarning: (w) => warnings.push(w.code) });
    await second.input('r', approveReply);
    expect(warnings).toContain('tail_truncated');
    expect((await readFile(second.logPath('r'), 'utf8')).split('\n')).toHaveLength(4);
    expect((await second.readLog('r')).at(-1)).toEqual(approveReply);
  });
});

describe('the store contract input cases can fail', () => {
  const inputCases = (suite: ContractSuite): ContractSuite['cases'] => suite.cases.filter((c) => c.name.includes('stores with inputRequest/input'));

  it('fails a store that loses its input records, in every input case', async () => {
    const losing = (): RunStore => Object.assign(new InMemoryStore(), { input: async () => undefined });
    const cases = inputCases(runStoreContract({ name: 'losing', makeStore: losing, lease: 'none' }));
    expect(cases).toHaveLength(3);
    for (const c of cases) await expect(c.run(), c.name).rejects.toMatchObject({ name: 'ContractViolationError' });
  });

  it('fails a store with inputRequest but no input', async () => {
    const half = (): RunStore => Object.assign(new InMemoryStore(), { input: undefined });
    const [first] = inputCases(runStoreContract({ name: 'half', makeStore: half, lease: 'none' }));
    await expect(first!.run()).rejects.toThrow(/inputRequest\(\) but no input\(\)/);
  });
});

describe('the §9 law over FileStore (crashAtEveryWrite, a fresh directory per case)', () => {
  /** add (safe, approved), note (never, approved), ask (answered by a person), note again (denied), final. */
  const SCRIPT = [
    '{"tool":"add","args":{"a":1,"b":2}}',
    '{"tool":"note","args":{"text":"first"}}',
    '{"tool":"ask","args":{"q":"colour?"}}',
    '{"tool":"note","args":{"text":"second"}}',
    '{"final":"done"}',
  ];

  function toolsOf(world: () => string[]): ToolSpec[] {
    return [
      { name: 'add', description: 'Add two integers.', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] }, replayPolicy: 'safe', needsApproval: true, handler: async (a) => String(Number(a['a']) + Number(a['b'])) },
      {
        name: 'note',
        description: 'Write a note (must not repeat).',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        replayPolicy: 'never',
        needsApproval: true,
        handler: async (a) => {
          world().push(`note:${String(a['text'])}`);
          return `noted ${String(a['text'])}`;
        },
      },
      { name: 'ask', description: 'Ask the user.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, answeredBy: 'human' },
    ];
  }

  it('ends every case crashed at each write and resumed with the same replies as the uninterrupted run; the approved never action once, the denied one never', async () => {
    const worlds: string[][] = [];
    const dirs: string[] = [];
    const registry = ToolRegistry.of(toolsOf(() => worlds.at(-1)!));
    const setup = (store: RunStore): { agent: ReturnType<typeof defineAgent>; request: RunRequest } => ({
      agent: defineAgent({ model: scriptedModel(SCRIPT), interpreter: jsonActionInterpreter(), store, events: collectingSink(), syntheticObservations: { notExecuted: 'Not executed.', envError: 'Env error.' } }),
      request: {
        runId: 'law',
        budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
        executor: registry.executor(),
        tools: registry,
        context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Add, note, ask, note.' }] }] },
        injections: {},
        modelBinding: {},
        modelReplayPolicy: 'safe',
        observationTemplate: '{observation}',
        toolRenderStyle: 'markdown',
        cancelGraceMs: 1000,
      },
    });
    const reply = (p: InputRequest): InputReply => {
      const action = p.decision?.action;
      const text = action?.kind === 'tool_call' ? (action.arguments as { text?: string }).text : undefined;
      if (p.kind === 'answer') return { kind: 'answer', resultId: p.resultId, text: 'Blue.' };
      if (p.kind === 'settle') {
        // Answered from the outside world: did the note happen?
        return worlds.at(-1)!.includes(`note:${text}`) ? { kind: 'executed', resultId: p.resultId, observation: `noted ${text}` } : { kind: 'retry', resultId: p.resultId };
      }
      if (text === 'second') return { kind: 'deny', resultId: p.resultId, reason: 'Enough notes.' };
      return { kind: 'approve', resultId: p.resultId };
    };
    const tmp = await freshDir();
    const report = await crashAtEveryWrite({
      setup,
      reply,
      store: () => {
        worlds.push([]);
        dirs.push(`${tmp}/case-${dirs.length}`);
        return new FileStore({ dir: dirs.at(-1)!, onWarning: quiet });
      },
    });
    expect(report.failures).toEqual([]);
    expect(report.reference.trajectory.map((s) => s.actionStatus)).toEqual(['executed', 'executed', 'executed', 'denied', null]);
    expect(report.writes).toBeGreaterThan(20);
    expect(report.cases).toHaveLength(report.writes * 2);
    expect(new Set(dirs).size).toBe(report.cases.length + 1);
    for (const world of worlds) expect(world).toEqual(['note:first']);
  });
});
