/**
 * Child process of the SIGKILL tests: a multi-step agent on FileStore with a `never`-replay tool
 * (`record`, appends a line to a side-effect file) and `safe` tools (`add`). It can kill itself
 * with a real SIGKILL at write number `--kill-at` (`before` the write, `after` it landed, or
 * `torn`: half the write's text written), and reports every landed write (`W <n> <method>`), every model
 * call (`CALL <callSeq> <sha256 of its messages>`), every reply it gives to an input request
 * (`INPUT <resultId> <kind>`) and its result (`RESULT <json>`) on stdout.
 *
 * Usage: node --import tsx crash-agent.ts <dir> <runId> <sideFile> <run|auto> [<killAt> <before|after|torn>]
 * `auto` resumes the run (first WITHOUT input, as a restarted process does), or starts it when
 * its log is empty. Either mode then answers every input request the run raises, the same way
 * every time: approvals approve (the step-6 `record` is denied), a settle request of a `record`
 * is answered from the outside world (the side file: `executed` when its line is there, `retry`
 * when not), a settle request of a model call is retried. `CRASH_VARIANT` in the environment:
 * `safe` (default), `never` (`modelReplayPolicy: 'never'`), `approval` (`record` needs approval),
 * `calls` (native tool calls, `parallelToolCalls: 3`: step 0 is one step of three calls, `add`,
 * `record`, `add`, each outcome written as a call result; step 1 answers).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, writeSync } from 'node:fs';
import { defineAgent, encodeRecord, isPolyLoopError, resume, run, ToolRegistry } from '../../../../src/core/index.ts';
import type {
  InputReply,
  InputRequest,
  LogRecord,
  ModelCall,
  ModelReply,
  RunRequest,
  RunResult,
  RunStore,
} from '../../../../src/core/index.ts';
import { nativeToolInterpreter } from '../../../../src/adapters/tool-interpreter.ts';
import { FileStore } from '../../../../src/platform-node/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../../src/testing/index.ts';

type KillHow = 'before' | 'after' | 'torn';
const [dir, runId, sideFile, mode, killAtArg, howArg] = process.argv.slice(2);
if (!dir || !runId || !sideFile || (mode !== 'run' && mode !== 'auto'))
  throw new Error('usage: crash-agent.ts <dir> <runId> <sideFile> <run|auto> [<killAt> <before|after|torn>]');
const killAt = killAtArg === undefined ? -1 : Number(killAtArg);
const how = (howArg ?? 'before') as KillHow;
const variant = process.env['CRASH_VARIANT'] ?? 'safe';

const say = (line: string): void => {
  writeSync(1, `${line}\n`); // synchronous: the parent sees it even if we die right after
};

/** The `calls` variant's model: three calls at once, then the answer. */
function severalCalls(call: ModelCall): ModelReply | string {
  if (call.callSeq > 0) return `done after ${call.callSeq} calls`;
  const toolCalls = [
    { id: 'c1', name: 'add', arguments: { a: 2, b: 3 } },
    { id: 'c2', name: 'record', arguments: { line: 'calls step0' } },
    { id: 'c3', name: 'add', arguments: { a: 5, b: 10 } },
  ];
  return { callId: 'calls-0', text: '', reasoning: null, toolCalls };
}

/** The model: a pure function of the call. It reads the last observation, so history must be rebuilt exactly. */
function reply(call: ModelCall): ModelReply | string {
  if (variant === 'calls') return severalCalls(call);
  const last = call.messages.at(-1);
  const text = last?.content.map((b) => (b.type === 'text' ? b.text : '')).join('') ?? '';
  const n = Number(/(-?\d+)\s*$/.exec(text)?.[1] ?? '0');
  const script: Record<number, string> = {
    0: JSON.stringify({ tool: 'add', args: { a: 2, b: 3 } }),
    1: JSON.stringify({ tool: 'record', args: { line: `step1 saw ${n}` } }),
    2: JSON.stringify({ tool: 'add', args: { a: 5, b: 10 } }),
    3: 'this reply is not JSON',
    4: JSON.stringify({ tool: 'record', args: { line: `step4 after ${text.length} chars` } }),
    5: JSON.stringify({ tool: 'add', args: { a: 15, b: call.callSeq } }),
    6: JSON.stringify({ tool: 'record', args: { line: `step6 saw ${n}` } }),
  };
  return script[call.callSeq] ?? JSON.stringify({ final: `done after ${call.callSeq} calls, last ${n}` });
}

const recorded = (line: string): string => `recorded ${line.length}`;

const tools = ToolRegistry.of([
  {
    name: 'add',
    description: 'Adds two integers.',
    parameters: {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      required: ['a', 'b'],
    },
    replayPolicy: 'safe',
    handler: async (args) => String(Number(args['a']) + Number(args['b'])),
  },
  {
    name: 'record',
    description: 'Appends a line to the side-effect file. Not idempotent.',
    parameters: { type: 'object', properties: { line: { type: 'string' } }, required: ['line'] },
    replayPolicy: 'never',
    needsApproval: variant === 'approval',
    handler: async (args) => {
      appendFileSync(sideFile, `${String(args['line'])}\n`);
      return recorded(String(args['line']));
    },
  },
]);

/** Counts writes, reports the ones that landed, and SIGKILLs this very process at the chosen one. */
function killingStore(inner: FileStore): RunStore {
  let n = 0;
  const write = async (
    method: string,
    runId: string,
    recs: LogRecord | readonly LogRecord[],
    doWrite: () => Promise<void>,
  ): Promise<void> => {
    const index = n++;
    if (index === killAt && how === 'before') process.kill(process.pid, 'SIGKILL');
    if (index === killAt && how === 'torn') {
      const line = (Array.isArray(recs) ? recs : [recs]).map((r: LogRecord) => `${encodeRecord(r)}\n`).join('');
      appendFileSync(inner.logPath(runId), line.slice(0, Math.max(1, Math.floor(line.length / 2))));
      process.kill(process.pid, 'SIGKILL');
    }
    await doWrite();
    say(`W ${index} ${method}`);
    if (index === killAt && how === 'after') process.kill(process.pid, 'SIGKILL');
  };
  return {
    runStarted: (id, rec) => write('runStarted', id, rec, () => inner.runStarted(id, rec)),
    intent: (id, rec) => write('intent', id, rec, () => inner.intent(id, rec)),
    // The model result and the action intent in one write, as the loop does when the store can.
    resultAndIntent: (id, result, intent) =>
      write('resultAndIntent', id, [result, intent], () => inner.resultAndIntent(id, result, intent)),
    result: (id, resultId, rec) => write('result', id, rec, () => inner.result(id, resultId, rec)),
    step: (id, rec) => write('step', id, rec, () => inner.step(id, rec)),
    runEnded: (id, rec) => write('runEnded', id, rec, () => inner.runEnded(id, rec)),
    inputRequest: (id, rec) => write('inputRequest', id, rec, () => inner.inputRequest(id, rec)),
    input: (id, rec) => write('input', id, rec, () => inner.input(id, rec)),
    callResult: (id, rec) => write('callResult', id, rec, () => inner.callResult(id, rec)),
    readLog: (id) => inner.readLog(id),
    acquire: (id, opts) => inner.acquire(id, opts),
  };
}

const model = scriptedModel(
  (call) => {
    say(`CALL ${call.callSeq} ${createHash('sha256').update(JSON.stringify(call.messages)).digest('hex')}`);
    return reply(call);
  },
  { model: 'crash-agent-policy' },
);

const store = new FileStore({ dir, onWarning: (w) => process.stderr.write(`WARN ${w.code} ${w.message}\n`) });
const agent = defineAgent({
  model,
  interpreter: variant === 'calls' ? nativeToolInterpreter('crash-agent-calls') : jsonActionInterpreter(),
  store: killingStore(store),
  events: { params: { sink: 'none' }, deliver: () => undefined },
  syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
});
const request: RunRequest = {
  runId,
  budget: { maxSteps: 20, maxValidActions: 20, maxContextChars: 100_000 },
  executor: tools.executor(),
  tools,
  context: {
    run: [{ role: 'system', content: [{ type: 'text', text: 'You add numbers and record notes. Reply with JSON.' }] }],
    goal: [{ role: 'user', content: [{ type: 'text', text: 'Add, record, and finish.' }] }],
  },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: variant === 'never' ? 'never' : 'safe',
  observationTemplate: 'Observation:\n{observation}',
  toolRenderStyle: 'json',
  cancelGraceMs: 1000,
  ...(variant === 'calls' ? { parallelToolCalls: 3 } : {}),
};

/** The person (and the outside world): the same reply every time a request is asked. */
function replyTo(p: InputRequest): InputReply {
  const action = p.decision?.action;
  const line = action?.kind === 'tool_call' ? String((action.arguments as { line?: unknown }).line ?? '') : '';
  if (p.kind === 'settle' && p.target === 'model_call') return { kind: 'retry', resultId: p.resultId };
  if (p.kind === 'settle') {
    let side = '';
    try {
      side = readFileSync(sideFile as string, 'utf8');
    } catch {
      // No side file yet: nothing was recorded.
    }
    return side.split('\n').includes(line)
      ? { kind: 'executed', resultId: p.resultId, observation: recorded(line) }
      : { kind: 'retry', resultId: p.resultId };
  }
  if (line.startsWith('step6')) return { kind: 'deny', resultId: p.resultId, reason: 'Not this one.' };
  return { kind: 'approve', resultId: p.resultId };
}

async function answerAll(first: RunResult): Promise<RunResult> {
  let result = first;
  while (result.pending !== null) {
    const input = replyTo(result.pending);
    say(`INPUT ${input.resultId} ${input.kind}`);
    result = await resume(agent, request, { input });
  }
  return result;
}

let first: RunResult;
if (mode === 'run') {
  first = await run(agent, request);
} else {
  try {
    first = await resume(agent, request);
    say(`FIRST ${first.pending ? `awaiting ${first.pending.resultId}` : first.stopReason}`);
  } catch (e) {
    if (!isPolyLoopError(e, 'run_not_found')) throw e;
    say('NOTE log empty, starting');
    first = await run(agent, request);
  }
}
say(`RESULT ${JSON.stringify(await answerAll(first))}`);
