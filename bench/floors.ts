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

/** A record sink of the durable floor: append one JSON line, fsync at barriers. */
export type FloorLog = { append(rec: object, sync: boolean): Promise<void> };

/**
 * The in-memory floor: call the model with the conversation so far, parse its reply, call the
 * tool, append both turns to history. `log` (durable floor) gets the same four writes per step
 * as the kernel's store, fsyncing at the barriers. Returns the final answer.
 */
export async function floorLoop(model: ModelCaller, n: number, log?: FloorLog, syncStep = false): Promise<string> {
  const messages: Message[] = [SYSTEM, GOAL];
  const signal = new AbortController().signal;
  for (let seq = 0; seq < n; seq++) {
    const resultId = `s${seq}.model`;
    await log?.append({ kind: 'intent', intent: 'model_call', stepIndex: seq, callSeq: seq, resultId, replayPolicy: 'safe' }, true);
    const reply = await model.call({ messages, callSeq: seq, runId: 'floor', resultId, binding: {}, tools: [], signal });
    await log?.append({ kind: 'result', resultId, stepIndex: seq, reply }, false);
    const parsed = JSON.parse(reply.text) as Parsed;
    if (typeof parsed.final === 'string') {
      await log?.append({ kind: 'step', step: { stepIndex: seq, decision: 'final', finalAnswer: parsed.final } }, true);
      return parsed.final;
    }
    await log?.append({ kind: 'intent', intent: 'action', stepIndex: seq, resultId: `s${seq}.action`, decision: parsed }, true);
    const observation = await noopTool(parsed.args ?? {});
    await log?.append({ kind: 'step', step: { stepIndex: seq, decision: 'action', observation } }, syncStep);
    messages.push(text('assistant', reply.text), text('user', `Observation:\n${observation}`));
  }
  throw new Error('floor loop ran out of steps');
}

/** A JSONL log on one open file handle: one `appendFile` per record, `fsync` when asked. */
export async function openFloorLog(path: string): Promise<FloorLog & { close(): Promise<void> }> {
  const fh = await open(path, 'a');
  return {
    async append(rec: object, sync: boolean): Promise<void> {
      await fh.appendFile(JSON.stringify(rec) + '\n', 'utf8');
      if (sync) await fh.sync();
    },
    close: () => fh.close(),
  };
}
