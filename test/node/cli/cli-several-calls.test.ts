/**
 * `polyloop runs` / `show` on runs whose step holds several tool calls: every open request with its
 * call's action, and each call of a step on its own line (resultId, action, status).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import { defineAgent, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ModelReply, RunRequest, ToolCallRequest, ToolSpec } from '../../../src/core/index.ts';
import { runCli } from '../../../src/cli/cli.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { collectingSink, scriptedModel } from '../../../src/testing/index.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

const calls = (...c: ToolCallRequest[]): ModelReply => ({ text: '', reasoning: null, callId: null, toolCalls: c });
const final = (text: string): ModelReply => ({ text, reasoning: null, callId: null });

const THREE = calls(
  { id: 'c1', name: 'read', arguments: { x: 'a' } },
  { id: 'c2', name: 'pay', arguments: { x: 'b' } },
  { id: 'c3', name: 'pay', arguments: { x: 'c' } },
);

function tools(): ToolSpec[] {
  const spec = (name: string): ToolSpec => ({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
    replayPolicy: 'safe',
    handler: async (args) => `${name} did ${String(args['x'])}`,
  });
  return [spec('read'), { ...spec('pay'), needsApproval: true }];
}

function setup(dir: string, runId: string) {
  const registry = ToolRegistry.of(tools());
  const agent = defineAgent({
    model: scriptedModel([THREE, final('done')]),
    interpreter: nativeToolInterpreter('test'),
    store: new FileStore({ dir, onWarning: () => undefined }),
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
  });
  const request: RunRequest = {
    runId,
    budget: { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 },
    executor: registry.executor(),
    tools: registry,
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Do three things.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 1_000,
    parallelToolCalls: 3,
  };
  return { agent, request };
}

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(argv, { out: (t) => void (out += t), err: (t) => void (out += t) });
  return { code, out };
}

const dirs = sharedTempDirs();
let dir = '';

beforeAll(async () => {
  dir = await dirs.make();
  const waiting = setup(dir, 'waiting');
  await run(waiting.agent, waiting.request);
  const half = setup(dir, 'half');
  await run(half.agent, half.request);
  await resume(half.agent, half.request, { input: { kind: 'approve', resultId: 's0.a2.input' } });
  const done = setup(dir, 'done');
  await run(done.agent, done.request);
  await resume(done.agent, done.request, { input: { kind: 'deny', resultId: 's0.a1.input', reason: 'Too much.' } });
  await resume(done.agent, done.request, { input: { kind: 'approve', resultId: 's0.a2.input' } });
});

describe('polyloop on a step with several calls', () => {
  it('says in runs that the run waits for two requests, naming each with its action and replies', async () => {
    const r = await cli('runs', dir);
    expect(r.code).toBe(0);
    const line = r.out.split('\n').find((l) => l.startsWith('waiting')) ?? '';
    expect(line).toContain('awaiting input at step 0 (2 requests): approval of pay({"x":"b"}) (s0.a1.input;');
    expect(line).toContain('approval of pay({"x":"c"}) (s0.a2.input; replies approve, deny, cancel)');
  });

  it('shows every open request in show with its call action, arguments and replies', async () => {
    const r = await cli('show', dir, 'waiting');
    expect(r.code).toBe(0);
    const pending = r.out.split('\n').filter((l) => /^(pending|action|arguments|replies) /.test(l));
    expect(pending).toEqual([
      'pending      approval at step 0 (s0.a1.input)',
      'action       pay',
      'arguments    {"x":"b"}',
      'replies      approve, deny, cancel',
      'pending      approval at step 0 (s0.a2.input)',
      'action       pay',
      'arguments    {"x":"c"}',
      'replies      approve, deny, cancel',
    ]);
  });

  it('shows each call of the waiting step on its own line: resultId, action and where it stands', async () => {
    const r = await cli('show', dir, 'half');
    expect(r.out).toContain('#0  awaiting 1 request of 3 calls  (s0.actions)');
    expect(r.out).toMatch(/\n {6}s0\.a0 {2}read\(\{"x":"a"\}\) {2}\[not run yet\]\n/);
    expect(r.out).toMatch(/\n {6}s0\.a1 {2}pay\(\{"x":"b"\}\) {2}\[awaiting approval: s0\.a1\.input\]\n/);
    expect(r.out).toMatch(/\n {6}s0\.a2 {2}pay\(\{"x":"c"\}\) {2}\[approve landed\]\n/);
    expect(r.out).toContain('pending      approval at step 0 (s0.a1.input)');
    expect(r.out).not.toContain('(s0.a2.input)\n');
  });

  it('shows each call of a finished step on its own line with its status and observation', async () => {
    const r = await cli('show', dir, 'done');
    expect(r.code).toBe(0);
    expect(r.out).toContain('#0  action   3 calls  [executed]');
    expect(r.out).toContain('      s0.a0  read({"x":"a"})  [executed]  read did a');
    expect(r.out).toContain('      s0.a1  pay({"x":"b"})  [denied]  Too much.');
    expect(r.out).toContain('      s0.a2  pay({"x":"c"})  [executed]  pay did c');
  });

  it('gives every open request with --json, with its action and accepted replies, and the calls in flight', async () => {
    const r = await cli('show', dir, 'waiting', '--json');
    const out = JSON.parse(r.out) as {
      pending: { resultId: string };
      openRequests: { resultId: string; action: unknown; acceptedReplies: string[] }[];
      inFlight: { calls?: { resultId: string; action: unknown; status: string }[] };
    };
    expect(out.pending.resultId).toBe('s0.a1.input');
    expect(out.openRequests).toMatchObject([
      { resultId: 's0.a1.input', kind: 'approval', action: { name: 'pay', arguments: { x: 'b' } } },
      { resultId: 's0.a2.input', kind: 'approval', action: { name: 'pay', arguments: { x: 'c' } } },
    ]);
    expect(out.openRequests.map((p) => p.acceptedReplies)).toEqual([
      ['approve', 'deny', 'cancel'],
      ['approve', 'deny', 'cancel'],
    ]);
    expect(out.inFlight.calls?.map((c) => [c.resultId, c.status])).toEqual([
      ['s0.a0', 'not run yet'],
      ['s0.a1', 'awaiting approval: s0.a1.input'],
      ['s0.a2', 'awaiting approval: s0.a2.input'],
    ]);
  });

  it('gives a run that is not waiting an empty openRequests with --json', async () => {
    const r = await cli('runs', dir, '--json');
    const rows = JSON.parse(r.out) as { runId: string; openRequests: unknown[] }[];
    expect(rows.find((x) => x.runId === 'done')?.openRequests).toEqual([]);
    expect(rows.find((x) => x.runId === 'half')?.openRequests).toHaveLength(1);
  });
});
