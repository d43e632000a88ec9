/**
 * The floors: hand-written loops that make the same model and tool calls as the kernel with no
 * library — what a step costs at the very least, measured in the same process as the kernel.
 * @module
 */
import { open } from 'node:fs/promises';
import type { Message, ModelCaller } from '../src/core/index.ts';
import { GOAL, noopTool, SYSTEM } from './fixtures.ts';

type Parsed = { readonly final?: string; readonly args?: { readonly i?: unknown } };
const text = (role: Message['role'], t: string): Message => ({ role, content: [{ type: 'text', text: t }] });

/** A record sink of the durable floor: append the records as JSON lines in one write, then fsync. */
export type FloorLog = { append(recs: readonly object[]): Promise<void> };

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

/** A JSONL log on one open file handle: one `appendFile` and one `fsync` per append. */
export async function openFloorLog(path: string): Promise<FloorLog & { close(): Promise<void> }> {
  const fh = await open(path, 'a');
  return {
    async append(recs: readonly object[]): Promise<void> {
      await fh.appendFile(recs.map((r) => `${JSON.stringify(r)}\n`).join(''), 'utf8');
      await fh.sync();
    },
    close: () => fh.close(),
  };
}
