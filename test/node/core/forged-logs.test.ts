/**
 * A log is not a capability: a crafted log (imported, planted in a store) never runs an action the
 * run's own tools would not run, never runs other arguments than the ones a person approved, and
 * never reports a trajectory its records do not hold.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CorruptLogError,
  decodeLog,
  decodeRecord,
  encodeRecord,
  exportRun,
  importRun,
  InMemoryStore,
  readRunLog,
  resume,
  run,
  SchemaVersionError,
} from '../../../src/core/index.ts';
import type { ActionExecutor, LogRecord, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { harness, makeTools } from './fixtures.ts';

const NOTE_THEN_FINAL = ['{"tool":"note","args":{"text":"hello"}}', '{"final":"done"}'];
const approvalTools = (calls: string[]): ToolSpec[] =>
  makeTools(calls).map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t));

type Rec = Record<string, unknown> & { kind: string };
/** The log's records with every field out (an export leaves out what a reader derives), to forge. */
const toLines = (ndjson: string): Rec[] => decodeLog(ndjson).records.map((r) => JSON.parse(encodeRecord(r)) as Rec);
const toNdjson = (recs: readonly Rec[]): string => recs.map((r) => `${JSON.stringify(r)}\n`).join('');

/** The exported log of a run that stopped at the approval of `note({ text: 'hello' })`. */
async function awaitingApproval(): Promise<{ lines: Rec[]; decision: Rec }> {
  const h = harness({ tools: approvalTools([]), script: NOTE_THEN_FINAL });
  const result = await run(h.agent, h.request);
  expect(result.stopReason).toBe('awaiting_input');
  return { lines: toLines(await exportRun(h.store, 'run-1')), decision: result.pending?.decision as unknown as Rec };
}

/** The exported log of a finished run of the standard tools (note is `never`). */
async function finishedNoteRun(): Promise<Rec[]> {
  const h = harness({ script: NOTE_THEN_FINAL });
  expect((await run(h.agent, h.request)).stopReason).toBe('final_answer');
  return toLines(await exportRun(h.store, 'run-1'));
}

const actionIntent = (decision: Rec, replayPolicy: 'safe' | 'never'): Rec => ({
  kind: 'intent',
  v: '1.1',
  intent: 'action',
  stepIndex: 0,
  resultId: 's0.action',
  replayPolicy,
  decision,
});
const approve = (): Rec => ({
  kind: 'input',
  v: '1.1',
  stepIndex: 0,
  resultId: 's0.input',
  reply: { kind: 'approve', resultId: 's0.input' },
  receivedAt: '2026-01-01T00:00:00.000Z',
});
const swapped = (decision: Rec): Rec => ({
  ...decision,
  action: { kind: 'tool_call', name: 'note', arguments: { text: 'evil' } },
});

/** Write records straight through a store's methods, as a store an attacker can write would hold them. */
async function plant(store: RunStore, recs: readonly Rec[]): Promise<void> {
  for (const r of recs) {
    const rec = r as unknown as LogRecord;
    if (rec.kind === 'run_started') await store.runStarted('run-1', rec);
    else if (rec.kind === 'intent') await store.intent('run-1', rec);
    else if (rec.kind === 'result') await store.result('run-1', rec.resultId, rec);
    else if (rec.kind === 'input_request') await store.inputRequest?.('run-1', rec);
    else if (rec.kind === 'input') await store.input?.('run-1', rec);
    else if (rec.kind === 'step') await store.step('run-1', rec);
    else if (rec.kind === 'upgrade') await store.upgrade?.('run-1', rec);
    else if (rec.kind === 'call_result') await store.callResult?.('run-1', rec);
    else if (rec.kind === 'resumed') await store.resumed?.('run-1', rec);
    else await store.runEnded('run-1', rec);
  }
}

describe('an action intent is trusted only as far as the run’s own tools allow', () => {
  it('an imported intent that claims `safe` for a `never` tool that needs approval is settled by a person, never run', async () => {
    const { lines, decision } = await awaitingApproval();
    const forged = [...lines.slice(0, 3), actionIntent(decision, 'safe')];
    const calls: string[] = [];
    const h = harness({ tools: approvalTools(calls), script: NOTE_THEN_FINAL });
    await importRun(h.store, 'run-1', toNdjson(forged));
    const result = await resume(h.agent, h.request);
    expect(calls).toEqual([]);
    expect(result.stopReason).toBe('awaiting_input');
    expect(result.pending).toMatchObject({ kind: 'settle', target: 'action', resultId: 's0.settle' });
  });

  it('an intent that claims `safe` for a `never` tool is settled on resume, not run a second time', async () => {
    const finished = await finishedNoteRun();
    const cut = finished.findIndex((r) => r.kind === 'intent' && r['intent'] === 'action');
    const forged = [...finished.slice(0, cut), { ...finished[cut], replayPolicy: 'safe' } as Rec];
    const calls: string[] = [];
    const h = harness({ script: NOTE_THEN_FINAL, calls });
    await importRun(h.store, 'run-1', toNdjson(forged));
    const result = await resume(h.agent, h.request);
    expect(calls).toEqual([]);
    expect(result.pending).toMatchObject({ kind: 'settle', target: 'action' });
  });

  it('an intent of a `safe` tool that needs approval and has none is settled, not run', async () => {
    const tools = (calls: string[]): ToolSpec[] =>
      approvalTools(calls).map((t) => (t.name === 'note' ? { ...t, replayPolicy: 'safe' as const } : t));
    const h0 = harness({ tools: tools([]), script: NOTE_THEN_FINAL });
    const first = await run(h0.agent, h0.request);
    const lines = toLines(await exportRun(h0.store, 'run-1'));
    const calls: string[] = [];
    const h = harness({ tools: tools(calls), script: NOTE_THEN_FINAL });
    await importRun(
      h.store,
      'run-1',
      toNdjson([...lines.slice(0, 3), actionIntent(first.pending?.decision as unknown as Rec, 'safe')]),
    );
    const result = await resume(h.agent, h.request);
    expect(calls).toEqual([]);
    expect(result.pending?.kind).toBe('settle');
  });

  it('an approved action whose intent was written before a crash is replayed when its tool is `safe`', async () => {
    const tools = (calls: string[]): ToolSpec[] =>
      approvalTools(calls).map((t) => (t.name === 'note' ? { ...t, replayPolicy: 'safe' as const } : t));
    const h0 = harness({ tools: tools([]), script: NOTE_THEN_FINAL });
    const first = await run(h0.agent, h0.request);
    const decision = first.pending?.decision as unknown as Rec;
    const lines = toLines(await exportRun(h0.store, 'run-1'));
    const calls: string[] = [];
    const h = harness({ tools: tools(calls), script: NOTE_THEN_FINAL });
    await importRun(h.store, 'run-1', toNdjson([...lines, approve(), actionIntent(decision, 'safe')]));
    const result = await resume(h.agent, h.request);
    expect(calls).toEqual(['note:hello']);
    expect(result.stopReason).toBe('final_answer');
  });
});

describe('what runs after an approval is what the person approved', () => {
  it('an intent whose arguments differ from the approved decision is refused at import, and nothing is written', async () => {
    const { lines, decision } = await awaitingApproval();
    const store = new InMemoryStore();
    const forged = toNdjson([...lines, approve(), actionIntent(swapped(decision), 'never')]);
    await expect(importRun(store, 'run-1', forged)).rejects.toThrow(CorruptLogError);
    await expect(importRun(store, 'run-1', forged)).rejects.toThrow(/not the decision approved in s0\.input/);
    expect(await store.readLog('run-1')).toEqual([]);
  });

  it('the same records planted in a store make resume refuse the log and run nothing', async () => {
    const { lines, decision } = await awaitingApproval();
    const calls: string[] = [];
    const h = harness({ tools: approvalTools(calls), script: NOTE_THEN_FINAL });
    await plant(h.store, [...lines, approve(), actionIntent(swapped(decision), 'safe')]);
    const before = (await h.store.readLog('run-1')).length;
    await expect(resume(h.agent, h.request)).rejects.toThrow(CorruptLogError);
    expect(calls).toEqual([]);
    expect((await h.store.readLog('run-1')).length).toBe(before);
  });

  it('a settle request that shows another action than the one in flight is corrupt', async () => {
    const finished = await finishedNoteRun();
    const cut = finished.findIndex((r) => r.kind === 'intent' && r['intent'] === 'action');
    const intent = finished[cut] as Rec;
    const settle: Rec = {
      kind: 'input_request',
      v: '1.1',
      stepIndex: 0,
      resultId: 's0.settle',
      request: { kind: 'settle', target: 'action', decision: swapped(intent['decision'] as Rec) },
      requestedAt: '2026-01-01T00:00:00.000Z',
    };
    const log = decodeLog(toNdjson([...finished.slice(0, cut + 1), settle])).records;
    expect(() => readRunLog(log)).toThrow(/shows another action than the one in flight/);
  });

  it('a retry intent that runs another action than the settled one is corrupt', async () => {
    const finished = await finishedNoteRun();
    const cut = finished.findIndex((r) => r.kind === 'intent' && r['intent'] === 'action');
    const intent = finished[cut] as Rec;
    const settle: Rec = {
      kind: 'input_request',
      v: '1.1',
      stepIndex: 0,
      resultId: 's0.settle',
      request: { kind: 'settle', target: 'action', decision: intent['decision'] },
      requestedAt: '',
    };
    const retry: Rec = {
      kind: 'input',
      v: '1.1',
      stepIndex: 0,
      resultId: 's0.settle',
      reply: { kind: 'retry', resultId: 's0.settle' },
      receivedAt: '',
    };
    const log = decodeLog(
      toNdjson([
        ...finished.slice(0, cut + 1),
        settle,
        retry,
        { ...intent, decision: swapped(intent['decision'] as Rec) },
      ]),
    ).records;
    expect(() => readRunLog(log)).toThrow(/is not the action that was settled/);
  });
});

describe('the end record and the step records are checked against the log', () => {
  it.each([
    ['more steps than the log holds', { steps: 42 }, /run_ended says 42 steps, the log holds 2/],
    ['another final answer', { finalAnswer: 'All good' }, /another final answer/],
    ['more valid actions', { validActions: 9 }, /9 valid actions/],
    [
      'final_answer over a trajectory that ends otherwise',
      { stopReason: 'final_answer', finalAnswer: null, steps: 1, validActions: 1 },
      /no final answer|holds 2/,
    ],
    ['other token totals', { usage: { inputTokens: 5, outputTokens: 5 } }, /token totals/],
  ])('a run_ended with %s is corrupt at import and at read', async (_label, change, message) => {
    const lines = await finishedNoteRun();
    const forged = [...lines.slice(0, -1), { ...lines.at(-1), ...change } as Rec];
    await expect(importRun(new InMemoryStore(), 'run-1', toNdjson(forged))).rejects.toThrow(message);
    expect(() => readRunLog(decodeLog(toNdjson(forged)).records)).toThrow(CorruptLogError);
  });

  it('a run_ended that claims 42 steps and "All good" makes resume refuse, not report the lie', async () => {
    const lines = await finishedNoteRun();
    const h = harness({ script: NOTE_THEN_FINAL });
    await plant(h.store, [...lines.slice(0, -1), { ...lines.at(-1), steps: 42, finalAnswer: 'All good' } as Rec]);
    await expect(resume(h.agent, h.request)).rejects.toThrow(CorruptLogError);
  });

  it.each([
    ['observation', 42],
    ['observationIsSynthetic', 'no'],
    ['actionStatus', 'exploded'],
    ['decision', 'teleport'],
    ['historyContent', 'text'],
    ['observationTruncatedChars', -1],
  ])('a step whose %s has the wrong type is corrupt', async (field, value) => {
    const lines = await finishedNoteRun();
    const i = lines.findIndex((r) => r.kind === 'step');
    const step = lines[i] as Rec;
    const forged = lines.map((r, j) => (j === i ? { ...step, step: { ...(step['step'] as Rec), [field]: value } } : r));
    expect(() => decodeLog(toNdjson(forged))).toThrow(new RegExp(`line ${i + 1}.*${field}|${field}.*`));
  });

  it.each([
    ['no status (a 1.1 record: the default of the lean form is 1.2’s)', '1.1', { observation: 'x' }],
    ['a status of null', '1.2', { status: null, observation: 'x' }],
    ['a status that is no status', '1.2', { status: 'done', observation: 'x' }],
  ])('an action result whose outcome has %s is corrupt', async (_label, v, outcome) => {
    const lines = await finishedNoteRun();
    const i = lines.findIndex((r) => r.kind === 'step' && r['actionResult'] !== null);
    const step = lines[i] as Rec;
    const forged = lines.map((r, j) =>
      j === i ? { ...step, v, actionResult: { resultId: 's0.action', outcome } } : r,
    );
    expect(() => decodeLog(toNdjson(forged))).toThrow(CorruptLogError);
  });
});

describe('the snapshot, the version and the depth of a record', () => {
  it('a run_started whose snapshot does not match its hash is refused at import and on resume', async () => {
    const lines = await finishedNoteRun();
    const first = lines[0] as Rec;
    const forged = [{ ...first, snapshotHash: '0'.repeat(64) }, ...lines.slice(1)];
    await expect(importRun(new InMemoryStore(), 'run-1', toNdjson(forged))).rejects.toThrow(
      /snapshotHash is not the hash of its snapshot/,
    );
    const h = harness({ script: NOTE_THEN_FINAL });
    await plant(h.store, forged.slice(0, 1));
    await expect(resume(h.agent, h.request)).rejects.toThrow(/snapshotHash/);
  });

  it.each(['01.7', '1.07', '+1.1', '1.1 ', '1e0.1'])('a record with v %j is refused with SchemaVersionError', (v) => {
    expect(() =>
      decodeRecord(
        JSON.stringify({ kind: 'run_ended', v, stopReason: 'cancelled', finalAnswer: null, steps: 0, validActions: 0 }),
      ),
    ).toThrow(SchemaVersionError);
  });

  it.each([
    ['111 levels', 111],
    ['100,000 levels', 100_000],
  ])(
    'a record nested %s deep is refused at import with CorruptLogError, the same in every runtime',
    async (_label, depth) => {
      const lines = await finishedNoteRun();
      const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const text = toNdjson(lines).replace(/\}\n$/, `,"extra":${deep}}\n`);
      const store = new InMemoryStore();
      await expect(importRun(store, 'run-1', text)).rejects.toThrow(
        /imported log:\d+: the record is nested more than 110 levels deep/,
      );
      expect(await store.readLog('run-1')).toEqual([]);
    },
  );

  it('arguments nested 100 levels deep (the most a run stores) still import', async () => {
    let args: unknown = 'x';
    for (let i = 0; i < 99; i++) args = { a: args };
    const h = harness({
      script: [JSON.stringify({ tool: 'note', args: { text: 'deep', more: args } }), '{"final":"ok"}'],
    });
    await run(h.agent, h.request);
    await importRun(new InMemoryStore(), 'run-1', await exportRun(h.store, 'run-1'));
  });
});

describe('invalid UTF-8 in a FileStore log', () => {
  it('inside a complete last line is corrupt, not silently replaced', async () => {
    const dir = await tempDir('polyloop-utf8-');
    const h = harness({ store: new FileStore({ dir }), script: NOTE_THEN_FINAL });
    await run(h.agent, h.request);
    const [file] = (await readdir(dir)).filter((f) => f.endsWith('.jsonl'));
    const lines = toLines(await exportRun(h.store, 'run-1'));
    const text = toNdjson(lines);
    const bytes = Buffer.from(text, 'utf8');
    // Replace the `d` of the final answer "done" in the last line with a lone continuation byte.
    const at = bytes.lastIndexOf(Buffer.from('"done"')) + 1;
    bytes[at] = 0x80;
    await writeFile(join(dir, file as string), bytes);
    await expect(h.store.readLog('run-1')).rejects.toThrow(/UTF-8/);
  });
});

describe('an approval request shows the action a person approves', () => {
  it('an approved request that shows no decision is corrupt, so nothing re-interpreted runs behind it', async () => {
    const { lines } = await awaitingApproval();
    const forged = lines.map((r) =>
      r.kind === 'input_request' ? { ...r, request: { ...(r['request'] as Rec), decision: null } } : r,
    );
    const calls: string[] = [];
    const h = harness({ tools: approvalTools(calls), script: NOTE_THEN_FINAL });
    await plant(h.store, [...forged, approve()]);
    await expect(resume(h.agent, h.request)).rejects.toThrow(CorruptLogError);
    expect(calls).toEqual([]);
  });

  it('an approval request whose target is the model call is corrupt', async () => {
    const { lines } = await awaitingApproval();
    const forged = lines.map((r) =>
      r.kind === 'input_request' ? { ...r, request: { ...(r['request'] as Rec), target: 'model_call' } } : r,
    );
    await expect(importRun(new InMemoryStore(), 'run-1', toNdjson([...forged, approve()]))).rejects.toThrow(
      CorruptLogError,
    );
  });
});

describe('a step’s action status agrees with its action result', () => {
  it.each([
    [
      'denied, though the step holds an action result',
      (s: Rec): Rec => ({ ...s, step: { ...(s['step'] as Rec), actionStatus: 'denied' } }),
    ],
    ['executed, though the step holds no action result', (s: Rec): Rec => ({ ...s, actionResult: null })],
    [
      'executed, though its action result was not executed',
      (s: Rec): Rec => {
        const ar = s['actionResult'] as Rec;
        return { ...s, actionResult: { ...ar, outcome: { ...(ar['outcome'] as Rec), status: 'env_error' } } };
      },
    ],
  ])('a step whose status says %s is corrupt', async (_label, change) => {
    const lines = await finishedNoteRun();
    const i = lines.findIndex((r) => r.kind === 'step' && r['actionResult'] !== null);
    // Without its run_ended, whose counters would give the lie away: the step itself must.
    const forged = lines.slice(0, -1).map((r, j) => (j === i ? change(r) : r));
    expect(() => readRunLog(decodeLog(toNdjson(forged)).records)).toThrow(CorruptLogError);
  });
});

describe('the end record’s optional token counts agree with the steps', () => {
  it('a run_ended claiming cached input tokens its steps never reported is corrupt', async () => {
    const lines = await finishedNoteRun();
    const end = lines.at(-1) as Rec;
    const forged = [...lines.slice(0, -1), { ...end, usage: { ...(end['usage'] as Rec), cachedInputTokens: 999 } }];
    expect(() => readRunLog(decodeLog(toNdjson(forged)).records)).toThrow(/token totals/);
  });

  it.each([
    ['eventDeliveryFailures', 'lots'],
    ['eventDeliveryFailures', -3],
    ['usage', { inputTokens: 0, outputTokens: 0, cachedInputTokens: 'many' }],
    ['finalAnswer', 42],
  ])('a run_ended whose %s is %j is corrupt, not reported', async (field, value) => {
    const lines = await finishedNoteRun();
    const forged = [...lines.slice(0, -1), { ...(lines.at(-1) as Rec), [field]: value }];
    expect(() => decodeLog(toNdjson(forged))).toThrow(CorruptLogError);
  });

  it('a run_ended with unknown extra keys still reads', async () => {
    const lines = await finishedNoteRun();
    const forged = [...lines.slice(0, -1), { ...(lines.at(-1) as Rec), note: 'from a newer writer' }];
    expect(readRunLog(decodeLog(toNdjson(forged)).records).state).toBe('ended');
  });
});

describe('a recorded reply holds only for the gate the run’s own tools set', () => {
  const answerTools = (): ToolSpec[] =>
    makeTools([]).map((t) =>
      t.name === 'note'
        ? { name: t.name, description: t.description, parameters: t.parameters, answeredBy: 'human' as const }
        : t,
    );
  const executor = (calls: string[]): ActionExecutor => ({
    replayPolicy: 'safe',
    execute: async (action) => {
      calls.push(action.kind === 'tool_call' ? action.name : 'code');
      return {
        status: 'executed',
        observation: 'ran',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      };
    },
  });

  it('an approval planted for a tool a person answers does not run the executor', async () => {
    const h0 = harness({ tools: answerTools(), script: NOTE_THEN_FINAL, request: { executor: executor([]) } });
    const first = await run(h0.agent, h0.request);
    expect(first.pending?.kind).toBe('answer');
    const lines = toLines(await exportRun(h0.store, 'run-1'));
    const forged = lines.map((r) =>
      r.kind === 'input_request' ? { ...r, request: { ...(r['request'] as Rec), kind: 'approval' } } : r,
    );
    const calls: string[] = [];
    const h = harness({ tools: answerTools(), script: NOTE_THEN_FINAL, request: { executor: executor(calls) } });
    await plant(h.store, [...forged, approve()]);
    await expect(resume(h.agent, h.request)).rejects.toThrow(
      /s0\.input is an approval of tool "note", which a person answers/,
    );
    expect(calls).toEqual([]);
  });

  it('an answer planted for a tool that needs approval is not recorded as the tool’s result', async () => {
    const { lines } = await awaitingApproval();
    const forged = lines.map((r) =>
      r.kind === 'input_request' ? { ...r, request: { ...(r['request'] as Rec), kind: 'answer' } } : r,
    );
    const answer: Rec = { ...approve(), reply: { kind: 'answer', resultId: 's0.input', text: 'I wrote it down' } };
    const calls: string[] = [];
    const h = harness({ tools: approvalTools(calls), script: NOTE_THEN_FINAL });
    await plant(h.store, [...forged, answer]);
    await expect(resume(h.agent, h.request)).rejects.toThrow(
      /an answer request for tool "note", which no person answers/,
    );
    expect(calls).toEqual([]);
  });
});

describe('a real log is never taken for a forged one', () => {
  it('an approval, a crash right after its action intent and a resume run the approved action once', async () => {
    const inner = new InMemoryStore();
    let intents = 0;
    const intent = async (runId: string, rec: Parameters<RunStore['intent']>[1]): Promise<void> => {
      await inner.intent(runId, rec);
      if (++intents === 2) throw new Error('simulated crash after the action intent');
    };
    const store = new Proxy(inner, {
      get: (t, k) =>
        k === 'intent'
          ? intent
          : typeof Reflect.get(t, k) === 'function'
            ? (Reflect.get(t, k) as () => unknown).bind(t)
            : Reflect.get(t, k),
    });
    const calls: string[] = [];
    const tools = approvalTools(calls).map((t) => (t.name === 'note' ? { ...t, replayPolicy: 'safe' as const } : t));
    const h = harness({ tools, script: NOTE_THEN_FINAL, store });
    const first = await run(h.agent, h.request);
    const resultId = first.pending?.resultId as string;
    await expect(resume(h.agent, h.request, { input: { kind: 'approve', resultId } })).rejects.toThrow(
      /simulated crash/,
    );
    expect(calls).toEqual([]);
    const result = await resume(h.agent, h.request);
    expect(calls).toEqual(['note:hello']);
    expect(result.stopReason).toBe('final_answer');
    await expect(importRun(new InMemoryStore(), 'run-1', await exportRun(h.store, 'run-1'))).resolves.toBeUndefined();
  });
});
