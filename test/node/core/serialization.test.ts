/** Record encoding and decoding (docs/design/records-and-recovery.md#records). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CorruptLogError,
  decodeLog,
  decodeRecord,
  encodeRecord,
  RECORD_VERSION,
  SchemaVersionError,
} from '../../../src/core/index.ts';
import { canonicalJson } from '../../../src/core/internal-entry.ts';
import type { LogRecord, StepRecord, StepWriteRecord } from '../../../src/core/index.ts';

const STEP: StepRecord = {
  stepIndex: 0,
  callSeq: 0,
  modelCallId: 'resp-1',
  modelText: 'line one\nline two\r\n\ttabbed "quoted" \u2028 separator',
  reasoning: null,
  decision: 'action',
  actionRepr: 'add({"a":1})',
  historyText: 'line one\nline two',
  historyContent: null,
  observation: 'multi\nline\nobservation',
  observationIsSynthetic: false,
  actionStatus: 'executed',
  envReportedCompletion: false,
  observationTruncatedChars: 0,
  finalAnswer: null,
  explanation: null,
  toolCallId: null,
  toolCompletedRun: false,
  usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 100 },
  finishReason: 'tool_calls',
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:01.000Z',
};

const RECORDS: readonly LogRecord[] = [
  {
    kind: 'run_started',
    v: RECORD_VERSION,
    runId: 'r\n1',
    snapshot: { model: { model: 'm' } },
    snapshotHash: 'ab'.repeat(32),
    startedAt: '2026-01-01T00:00:00.000Z',
  },
  {
    kind: 'intent',
    v: RECORD_VERSION,
    intent: 'model_call',
    stepIndex: 0,
    callSeq: 0,
    resultId: 's0.model',
    replayPolicy: 'safe',
  },
  {
    kind: 'result',
    v: RECORD_VERSION,
    resultId: 's0.model',
    stepIndex: 0,
    callSeq: 0,
    reply: {
      callId: 'resp-1',
      text: 'a\nb',
      reasoning: 'think\nmore',
      toolCalls: [],
      content: null,
      finishReason: 'tool_calls',
      usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 100 },
      providerMetadata: { openai: { serviceTier: 'default' } },
    },
  },
  {
    kind: 'intent',
    v: RECORD_VERSION,
    intent: 'action',
    stepIndex: 0,
    resultId: 's0.action',
    replayPolicy: 'never',
    decision: {
      kind: 'action',
      action: { kind: 'code', source: 'print(1)\nprint(2)' },
      trajectoryRepr: 'code',
      historyText: 'x\ny',
    },
  },
  {
    kind: 'step',
    v: RECORD_VERSION,
    step: STEP,
    actionResult: {
      resultId: 's0.action',
      outcome: {
        status: 'executed',
        observation: 'o\np',
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      },
    },
  },
  {
    kind: 'run_ended',
    v: RECORD_VERSION,
    stopReason: 'final_answer',
    finalAnswer: 'the\nanswer',
    steps: 1,
    validActions: 1,
    eventDeliveryFailures: 0,
    usage: { inputTokens: 120, outputTokens: 7, cachedInputTokens: 100 },
    endedAt: '2026-01-01T00:00:02.000Z',
  },
];

const line = (rec: Record<string, unknown>): string => JSON.stringify(rec);

describe('encodeRecord', () => {
  it.each(RECORDS.map((rec) => ({ kind: rec.kind, rec })))(
    'encodes a $kind record with newlines in its text as one line that decodes back',
    ({ rec }) => {
      const encoded = encodeRecord(rec);
      expect(encoded).not.toMatch(/[\n\r]/);
      expect(decodeRecord(encoded)).toEqual(rec);
    },
  );

  it('encodes a whole log that decodeLog reads back record for record', () => {
    const text = `${RECORDS.map(encodeRecord).join('\n')}\n`;
    expect(text.split('\n')).toHaveLength(RECORDS.length + 1);
    expect(decodeLog(text)).toEqual({ records: RECORDS, tornLine: null });
  });
});

describe('decodeRecord: schema version', () => {
  const base = {
    kind: 'run_ended',
    stopReason: 'max_steps',
    finalAnswer: null,
    steps: 3,
    validActions: 2,
    eventDeliveryFailures: 0,
    endedAt: '',
  };

  it.each([{ v: '1.0' }, { v: '1.7' }, { v: '1.123' }])('accepts v $v', ({ v }) => {
    expect(decodeRecord(line({ ...base, v }))).toMatchObject({ kind: 'run_ended', v, steps: 3 });
  });

  it.each([
    { label: 'major 2', rec: { ...base, v: '2.0' } },
    { label: 'major 0', rec: { ...base, v: '0.9' } },
    { label: 'a number', rec: { ...base, v: 2 } },
    { label: 'the number 1', rec: { ...base, v: 1 } },
    { label: 'a major without minor', rec: { ...base, v: '1' } },
    { label: 'three parts', rec: { ...base, v: '1.0.0' } },
    { label: 'null', rec: { ...base, v: null } },
    { label: 'missing', rec: base },
  ])('refuses v as $label with SchemaVersionError', ({ rec }) => {
    expect(() => decodeRecord(line(rec))).toThrow(SchemaVersionError);
  });

  it('names the version it found', () => {
    expect(() => decodeRecord(line({ ...base, v: '2.0' }))).toThrow(/"2\.0".*1\.x/);
  });
});

describe('decodeRecord: corrupt text', () => {
  it.each([
    { label: 'an unknown kind', text: line({ kind: 'checkpoint', v: '1.0' }) },
    { label: 'a missing kind', text: line({ v: '1.0' }) },
    { label: 'an array', text: '[{"kind":"run_ended","v":"1.0"}]' },
    { label: 'a string', text: '"run_ended"' },
    { label: 'null', text: 'null' },
    { label: 'a number', text: '42' },
    { label: 'bad JSON', text: '{"kind":"run_ended",' },
    { label: 'an empty line', text: '' },
    {
      label: 'a step without stepIndex',
      text: line({ kind: 'step', v: '1.0', step: { decision: 'final' }, actionResult: null }),
    },
    {
      label: 'an intent with an unknown replay policy',
      text: line({
        kind: 'intent',
        v: '1.0',
        intent: 'model_call',
        stepIndex: 0,
        callSeq: 0,
        resultId: 's0.model',
        replayPolicy: 'maybe',
      }),
    },
    {
      label: 'a run_ended with an unknown stop reason',
      text: line({ kind: 'run_ended', v: '1.0', stopReason: 'bored', steps: 0, validActions: 0 }),
    },
  ])('refuses $label with CorruptLogError', ({ text }) => {
    expect(() => decodeRecord(text)).toThrow(CorruptLogError);
  });
});

describe('decodeRecord: compatible additions', () => {
  it('keeps unknown extra fields at the top level and inside the step', () => {
    const rec = {
      kind: 'step',
      v: '1.3',
      step: { ...STEP, futureField: { nested: [1] } },
      actionResult: null,
      writer: 'v1.3 library',
    };
    const decoded = decodeRecord(line(rec)) as StepWriteRecord & { writer?: string; step: { futureField?: unknown } };
    expect(decoded.writer).toBe('v1.3 library');
    expect(decoded.step.futureField).toEqual({ nested: [1] });
  });

  it('fills defaults into a step written without toolCallId, toolCompletedRun, historyContent, callSeq', () => {
    const {
      toolCallId: _a,
      toolCompletedRun: _b,
      historyContent: _c,
      callSeq: _d,
      usage: _e,
      finishReason: _f,
      ...old
    } = { ...STEP, stepIndex: 4 };
    const decoded = decodeRecord(line({ kind: 'step', v: '1.0', step: old, actionResult: null })) as StepWriteRecord;
    expect(decoded.step).toEqual({
      ...STEP,
      stepIndex: 4,
      callSeq: 4,
      toolCallId: null,
      toolCompletedRun: false,
      historyContent: null,
      usage: null,
      finishReason: null,
    });
  });

  it('fills defaults into a minimal step (only stepIndex and decision)', () => {
    const decoded = decodeRecord(
      line({ kind: 'step', v: '1.0', step: { stepIndex: 2, decision: 'invalid' } }),
    ) as StepWriteRecord;
    expect(decoded.actionResult).toBeNull();
    expect(decoded.step).toMatchObject({
      stepIndex: 2,
      callSeq: 2,
      decision: 'invalid',
      modelCallId: null,
      observation: null,
      actionStatus: null,
      envReportedCompletion: false,
      observationTruncatedChars: 0,
      observationIsSynthetic: false,
      finalAnswer: null,
      explanation: null,
    });
  });

  it('fills toolCalls, content, reasoning and the 1.1 reply metadata into a result written without them', () => {
    const decoded = decodeRecord(
      line({
        kind: 'result',
        v: '1.0',
        resultId: 's1.model',
        stepIndex: 1,
        callSeq: 1,
        reply: { callId: null, text: 'hi' },
      }),
    );
    expect(decoded).toEqual({
      kind: 'result',
      v: '1.0',
      resultId: 's1.model',
      stepIndex: 1,
      callSeq: 1,
      reply: {
        callId: null,
        text: 'hi',
        reasoning: null,
        toolCalls: [],
        content: null,
        finishReason: null,
        usage: null,
        providerMetadata: null,
      },
    });
  });

  it('keeps toolCalls a result was written with', () => {
    const toolCalls = [{ id: 'c1', name: 'add', arguments: { a: 1 } }];
    const decoded = decodeRecord(
      line({
        kind: 'result',
        v: '1.0',
        resultId: 's0.model',
        stepIndex: 0,
        callSeq: 0,
        reply: { callId: 'x', text: '', reasoning: null, toolCalls },
      }),
    );
    expect(decoded.kind === 'result' && decoded.reply.toolCalls).toEqual(toolCalls);
  });

  it('fills eventDeliveryFailures, finalAnswer, usage and endedAt into a run_ended written without them', () => {
    const decoded = decodeRecord(
      line({ kind: 'run_ended', v: '1.0', stopReason: 'max_steps', steps: 5, validActions: 3 }),
    );
    expect(decoded).toEqual({
      kind: 'run_ended',
      v: '1.0',
      stopReason: 'max_steps',
      steps: 5,
      validActions: 3,
      finalAnswer: null,
      eventDeliveryFailures: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
      endedAt: '',
    });
  });
});

describe('a 1.0 record encoded again', () => {
  const fixtures = fileURLToPath(new URL('../../fixtures/portability/', import.meta.url));
  const lines = readdirSync(fixtures)
    .filter((name) => name.includes('-v1.0-'))
    .flatMap((name) =>
      readFileSync(join(fixtures, name), 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    );

  it('is the line a 1.0 writer wrote, for every line of the checked-in 1.0 logs', () => {
    expect(lines.length).toBeGreaterThan(100);
    for (const text of lines) expect(encodeRecord(decodeRecord(text))).toBe(text);
  });

  it('leaves out the 1.1 fields only while they hold the defaults decoding filled in', () => {
    const reply = { callId: null, text: 'hi', reasoning: null, toolCalls: [], content: null };
    const result = { kind: 'result', v: '1.0', resultId: 's0.model', stepIndex: 0, callSeq: 0, reply };
    expect(encodeRecord(decodeRecord(line(result)))).toBe(line(result));
    const usage = { inputTokens: 3, outputTokens: 4 };
    const given = { ...result, reply: { ...reply, finishReason: 'stop', usage, providerMetadata: null } };
    expect(JSON.parse(encodeRecord(decodeRecord(line(given)))).reply).toEqual({
      ...reply,
      finishReason: 'stop',
      usage,
    });
    const ended = {
      kind: 'run_ended',
      v: '1.0',
      stopReason: 'max_steps',
      finalAnswer: null,
      steps: 5,
      validActions: 3,
    };
    const zero = { ...ended, eventDeliveryFailures: 0, endedAt: '' };
    expect(encodeRecord(decodeRecord(line(ended)))).toBe(line(zero));
    const counted = { ...zero, usage };
    expect(JSON.parse(encodeRecord(decodeRecord(line(counted))))).toEqual(counted);
    const nulled = { ...zero, usage: null };
    expect(JSON.parse(encodeRecord(decodeRecord(line(nulled))))).toEqual(nulled);
    // A 1.1 record keeps every field it holds.
    expect(JSON.parse(encodeRecord(decodeRecord(line({ ...ended, v: '1.1' }))))).toHaveProperty('usage');
  });
});

describe('decodeLog', () => {
  const lines = RECORDS.map(encodeRecord);

  it('drops and reports a torn last line', () => {
    const torn = lines[3]!.slice(0, 25);
    const decoded = decodeLog([...lines.slice(0, 3), torn]);
    expect(decoded.records).toEqual(RECORDS.slice(0, 3));
    expect(decoded.tornLine).toBe(4);
  });

  it('drops and reports a torn last line of JSONL text', () => {
    const decoded = decodeLog(`${lines.slice(0, 2).join('\n')}\n{"kind":"res`);
    expect(decoded).toEqual({ records: RECORDS.slice(0, 2), tornLine: 3 });
  });

  it('reads text with and without a trailing newline alike', () => {
    const withNl = decodeLog(`${lines.join('\n')}\n`);
    const without = decodeLog(lines.join('\n'));
    expect(withNl).toEqual({ records: RECORDS, tornLine: null });
    expect(without).toEqual(withNl);
  });

  it.each([
    { label: 'empty text', input: '' },
    { label: 'no lines', input: [] as string[] },
  ])('reads $label as an empty log', ({ input }) => {
    expect(decodeLog(input)).toEqual({ records: [], tornLine: null });
  });

  it.each([
    { label: 'bad JSON', bad: '{"kind": oops}', at: 3 },
    { label: 'a blank line', bad: '', at: 3 },
    { label: 'an unknown kind', bad: line({ kind: 'mystery', v: '1.0' }), at: 3 },
    { label: 'a non-object', bad: '[]', at: 2 },
  ])('refuses $label in the middle with CorruptLogError at line $at, naming the source', ({ bad, at }) => {
    const input = [...lines.slice(0, at - 1), bad, ...lines.slice(at - 1)];
    let caught: unknown;
    try {
      decodeLog(input, { source: '/logs/run-1.jsonl' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CorruptLogError);
    const err = caught as CorruptLogError;
    expect(err.line).toBe(at);
    expect(err.source).toBe('/logs/run-1.jsonl');
    expect(err.message).toContain(`/logs/run-1.jsonl:${at}`);
  });

  it('refuses a blank line in the middle of JSONL text', () => {
    expect(() => decodeLog(`${lines[0]}\n\n${lines[1]}\n`)).toThrow(CorruptLogError);
  });

  it('refuses a complete but invalid last line instead of calling it torn', () => {
    // Valid JSON is a landed write: a bad record there is corruption, not a torn append.
    expect(() => decodeLog([lines[0]!, line({ kind: 'mystery', v: '1.0' })])).toThrow(CorruptLogError);
  });

  it('refuses a foreign schema major anywhere with SchemaVersionError', () => {
    const foreign = line({ ...JSON.parse(lines[1]!), v: '2.0' });
    expect(() => decodeLog([lines[0]!, foreign, lines[2]!])).toThrow(SchemaVersionError);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level, inside arrays too, and keeps array order', () => {
    const value = { b: 1, a: { d: [{ z: 1, y: 2 }, 3], c: null }, aa: [2, 1] };
    expect(canonicalJson(value)).toBe('{"a":{"c":null,"d":[{"y":2,"z":1},3]},"aa":[2,1],"b":1}');
  });

  it('gives the same text for equal values built in different key orders', () => {
    const one = {
      model: { model: 'm', temperature: 0 },
      tools: [{ name: 't', parameters: { type: 'object', properties: { x: {} } } }],
    };
    const two = {
      tools: [{ parameters: { properties: { x: {} }, type: 'object' }, name: 't' }],
      model: { temperature: 0, model: 'm' },
    };
    expect(canonicalJson(one)).toBe(canonicalJson(two));
    expect(canonicalJson(one)).toBe(canonicalJson(JSON.parse(canonicalJson(one))));
  });

  it('distinguishes values that differ only deep inside', () => {
    expect(canonicalJson({ a: { b: [1, { c: 'x' }] } })).not.toBe(canonicalJson({ a: { b: [1, { c: 'y' }] } }));
  });

  it('encodes scalars as JSON does', () => {
    expect([canonicalJson('s\n'), canonicalJson(1.5), canonicalJson(null), canonicalJson(true)]).toEqual([
      '"s\\n"',
      '1.5',
      'null',
      'true',
    ]);
  });
});

describe('human-input records have one encoding too', () => {
  it('an input record encodes its reply in one key order, whatever order the caller built it in', () => {
    const a = encodeRecord({
      kind: 'input',
      v: RECORD_VERSION,
      stepIndex: 0,
      resultId: 's0.input',
      reply: { resultId: 's0.input', kind: 'deny', reason: 'no' },
      receivedAt: '',
    });
    const b = encodeRecord({
      kind: 'input',
      v: RECORD_VERSION,
      stepIndex: 0,
      resultId: 's0.input',
      reply: { reason: 'no', kind: 'deny', resultId: 's0.input' },
      receivedAt: '',
    });
    expect(a).toBe(b);
    expect(encodeRecord(decodeRecord(b))).toBe(a);
  });

  it('an input_request keeps unknown keys of its request, like every record keeps unknown fields', () => {
    const text = line({
      kind: 'input_request',
      v: '1.1',
      stepIndex: 0,
      resultId: 's0.input',
      request: { kind: 'approval', target: 'action', decision: null, note: 'from a newer writer' },
      requestedAt: '',
    });
    const decoded = decodeRecord(text);
    expect(decoded.kind === 'input_request' && (decoded.request as unknown as Record<string, unknown>)['note']).toBe(
      'from a newer writer',
    );
  });
});

describe('keys named like object members are data', () => {
  it('an input_request and a step keep keys named toString, constructor and __proto__ through decode and encode', () => {
    const text =
      '{"v":"1.1","kind":"input_request","stepIndex":0,"resultId":"s0.input","request":{"toString":"t","kind":"approval","constructor":"c","__proto__":"p","target":"action","decision":null},"requestedAt":""}';
    const decoded = decodeRecord(text);
    const again = JSON.parse(encodeRecord(decoded)) as { request: Record<string, unknown> };
    for (const key of ['toString', 'constructor', '__proto__'])
      expect(Object.hasOwn(again.request, key), key).toBe(true);
    expect(encodeRecord(decodeRecord(encodeRecord(decoded)))).toBe(encodeRecord(decoded));
  });
});
