/**
 * The floors: hand-written loops that make the same model and tool calls as the kernel with no
 * library — what a step costs at the very least, measured in the same process as the kernel.
 * @module
 */
import { constants, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { ToolRegistry } from '../src/core/index.ts';
import type { Message, ModelCaller } from '../src/core/index.ts';
import { GOAL, instantModel, noopTool, SYSTEM } from './fixtures.ts';

type Parsed = { readonly final?: string; readonly args?: { readonly i?: unknown } };
const text = (role: Message['role'], t: string): Message => ({ role, content: [{ type: 'text', text: t }] });

/**
 * A record sink of the durable floor: append the records as JSON lines in one write, then fsync.
 * `bytes`, when given, is how many bytes the append writes: the kernel's for the same barrier, so
 * the same bytes reach the disk (the lines padded with spaces, which JSON allows; never cut).
 */
export type FloorLog = { append(recs: readonly object[], bytes?: number): Promise<void> };

/** What the kernel wrote at an action step's two barriers (its bytes), for the floor to write as much. */
export type StepBytes = { readonly first: number; readonly second: number };

/** Sees how long each step of a floor loop took (ms), and whether it was the final answer. */
export type StepTimer = (ms: number, final: boolean) => void;

/**
 * The in-memory floor: call the model with the conversation so far, parse its reply, call the
 * tool, append both turns to history. `log` (durable floor) gets the kernel's records with the
 * fewest barriers the protocol allows (decision 0040): an action step is two append+fsync pairs
 * (model intent, result and action intent; the step), a final answer one (model intent, result,
 * step). Returns the final answer.
 */
export async function floorLoop(model: ModelCaller, n: number, log?: FloorLog, onStep?: StepTimer): Promise<string> {
  const messages: Message[] = [SYSTEM, GOAL];
  const signal = new AbortController().signal;
  for (let seq = 0; seq < n; seq++) {
    const t0 = onStep ? performance.now() : 0;
    const resultId = `s${seq}.model`;
    const intent = {
      kind: 'intent',
      intent: 'model_call',
      stepIndex: seq,
      callSeq: seq,
      resultId,
      replayPolicy: 'safe',
    };
    const reply = await model.call({
      messages,
      callSeq: seq,
      runId: 'floor',
      resultId,
      binding: {},
      tools: [],
      signal,
    });
    const result = { kind: 'result', resultId, stepIndex: seq, reply };
    const parsed = JSON.parse(reply.text) as Parsed;
    if (typeof parsed.final === 'string') {
      await log?.append([
        intent,
        result,
        { kind: 'step', step: { stepIndex: seq, decision: 'final', finalAnswer: parsed.final } },
      ]);
      onStep?.(performance.now() - t0, true);
      return parsed.final;
    }
    await log?.append([
      intent,
      result,
      { kind: 'intent', intent: 'action', stepIndex: seq, resultId: `s${seq}.action`, decision: parsed },
    ]);
    const observation = await noopTool(parsed.args ?? {});
    await log?.append([{ kind: 'step', step: { stepIndex: seq, decision: 'action', observation } }]);
    messages.push(text('assistant', reply.text), text('user', `Observation:\n${observation}`));
    onStep?.(performance.now() - t0, false);
  }
  throw new Error('floor loop ran out of steps');
}

/**
 * The durable floor one step at a time, so a bench can run a floor step right beside each kernel
 * step (machine noise then hits both alike): the step of {@link floorLoop} with a log, the same
 * records and the same two appends, the conversation kept between calls. `bytes` (the kernel's at
 * the same step) pads the appends. Resolves with the final answer, or null after an action step.
 */
export function durableFloorSteps(
  model: ModelCaller,
  log: FloorLog,
): (seq: number, bytes?: StepBytes | number) => Promise<string | null> {
  const messages: Message[] = [SYSTEM, GOAL];
  const signal = new AbortController().signal;
  return async (seq, bytes) => {
    const resultId = `s${seq}.model`;
    const intent = {
      kind: 'intent',
      intent: 'model_call',
      stepIndex: seq,
      callSeq: seq,
      resultId,
      replayPolicy: 'safe',
    };
    const call = { messages, callSeq: seq, runId: 'floor', resultId, binding: {}, tools: [], signal };
    const reply = await model.call(call);
    const result = { kind: 'result', resultId, stepIndex: seq, reply };
    const parsed = JSON.parse(reply.text) as Parsed;
    const [first, second] = typeof bytes === 'number' ? [bytes, undefined] : [bytes?.first, bytes?.second];
    if (typeof parsed.final === 'string') {
      const step = { kind: 'step', step: { stepIndex: seq, decision: 'final', finalAnswer: parsed.final } };
      await log.append([intent, result, step], first);
      return parsed.final;
    }
    const actionId = `s${seq}.action`;
    await log.append(
      [intent, result, { kind: 'intent', intent: 'action', stepIndex: seq, resultId: actionId, decision: parsed }],
      first,
    );
    const observation = await noopTool(parsed.args ?? {});
    await log.append([{ kind: 'step', step: { stepIndex: seq, decision: 'action', observation } }], second);
    messages.push(text('assistant', reply.text), text('user', `Observation:\n${observation}`));
    return null;
  };
}

/**
 * The bench's tool (same name, schema and policy as the fixtures'), whose handler is `handler`: the
 * durable section's kernel runs a floor step inside it.
 */
export const noopToolWith = (handler: (args: { readonly i?: unknown }) => Promise<string>): ToolRegistry =>
  ToolRegistry.of([
    {
      name: 'noop',
      description: 'Does nothing and says ok.',
      parameters: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] },
      replayPolicy: 'safe',
      completesRun: false,
      handler,
    },
  ]);

/** The flags FileStore opens a log with (append, no link followed, never blocking on a FIFO). */
const LOG_FLAGS =
  constants.O_WRONLY |
  constants.O_APPEND |
  constants.O_CREAT |
  (constants.O_NOFOLLOW ?? 0) |
  (constants.O_NONBLOCK ?? 0);

/**
 * A JSONL log on one open file handle, written the way FileStore writes under its lease, and only
 * that: opened with the same flags, one synchronous `write` into the page cache and one `fsync`
 * (asynchronous, in the thread pool) per append.
 */
export async function openFloorLog(path: string): Promise<FloorLog & { close(): Promise<void> }> {
  const fh = await open(path, LOG_FLAGS, 0o644);
  return {
    async append(recs: readonly object[], bytes?: number): Promise<void> {
      const lines = recs.map((r) => JSON.stringify(r)).join('\n');
      const short = bytes === undefined ? 0 : bytes - 1 - Buffer.byteLength(lines);
      const buf = Buffer.from(`${lines}${short > 0 ? ' '.repeat(short) : ''}\n`, 'utf8');
      for (let at = 0; at < buf.length; ) at += writeSync(fh.fd, buf, at, buf.length - at);
      await fh.sync();
    },
    close: () => fh.close(),
  };
}

/** µs per step of a durable floor run of `n` steps on a new log, the appends `bytes` long (the final one `last`). */
export async function durableFloorRunUs(
  path: string,
  n: number,
  bytes: readonly StepBytes[],
  last?: number,
): Promise<number> {
  const log = await openFloorLog(path);
  const step = durableFloorSteps(instantModel(n), log);
  const t0 = performance.now();
  for (let seq = 0; seq < n; seq++) await step(seq, seq < n - 1 ? bytes[seq] : last);
  const us = ((performance.now() - t0) * 1000) / n;
  await log.close();
  return us;
}
