/**
 * Child process of the SIGKILL tests: a multi-step agent on FileStore with a `never`-replay tool
 * (`record`, appends a line to a side-effect file) and `safe` tools (`add`). It can kill itself
 * with a real SIGKILL at write number `--kill-at` (`before` the write, `after` it landed, or
 * `torn`: half the line written), and reports every landed write (`W <n> <method>`), every model
 * call (`CALL <callSeq> <sha256 of its messages>`) and its result (`RESULT <json>`) on stdout.
 *
 * Usage: node --import tsx crash-agent.ts <dir> <runId> <sideFile> <run|auto> [<killAt> <before|after|torn>]
 * `auto` resumes the run, or starts it when its log is empty. `CRASH_MODEL_POLICY=never` in the
 * environment makes the run's `modelReplayPolicy` `never` (default `safe`).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, writeSync } from 'node:fs';
import { defineAgent, encodeRecord, isPolyLoopError, resume, run, ToolRegistry } from '../../../../src/core/index.ts';
import type { LogRecord, ModelCall, RunRequest, RunStore } from '../../../../src/core/index.ts';
import { FileStore } from '../../../../src/platform-node/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../../src/testing/index.ts';

type KillHow = 'before' | 'after' | 'torn';
const [dir, runId, sideFile, mode, killAtArg, howArg] = process.argv.slice(2);
if (!dir || !runId || !sideFile || (mode !== 'run' && mode !== 'auto')) throw new Error('usage: crash-agent.ts <dir> <runId> <sideFile> <run|auto> [<killAt> <before|after|torn>]');
const killAt = killAtArg === undefined ? -1 : Number(killAtArg);
const how = (howArg ?? 'before') as KillHow;

const say = (line: string): void => {
  writeSync(1, line + '\n'); // synchronous: the parent sees it even if we die right after
};

/** The model: a pure function of the call. It reads the last observation, so history must be rebuilt exactly. */
function reply(call: ModelCall): string {
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

const tools = ToolRegistry.of([
  {
    name: 'add',
    description: 'Adds two integers.',
    parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
    replayPolicy: 'safe',
    handler: async (args) => String(Number(args['a']) + Number(args['b'])),
  },
  {
    name: 'record',
    description: 'Appends a line to the side-effect file. Not idempotent.',
    parameters: { type: 'object', properties: { line: { type: 'string' } }, required: ['line'] },
    replayPolicy: 'never',
    handler: async (args) => {
      appendFileSync(sideFile, `${String(args['line'])}\n`);
      return `recorded ${String(args['line']).length}`;
    },
  },
]);

/** Counts writes, reports the ones that landed, and SIGKILLs this very process at the chosen one. */
function killingStore(inner: FileStore): RunStore {
  let n = 0;
  const write = async (method: string, runId: string, rec: LogRecord, doWrite: () => Promise<void>): Promise<void> => {
    const index = n++;
    if (index === killAt && how === 'before') process.kill(process.pid, 'SIGKILL');
    if (index === killAt && how === 'torn') {
      const line = encodeRecord(rec) + '\n';
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
    result: (id, resultId, rec) => write('result', id, rec, () => inner.result(id, resultId, rec)),
    step: (id, rec) => write('step', id, rec, () => inner.step(id, rec)),
    runEnded: (id, rec) => write('runEnded', id, rec, () => inner.runEnded(id, rec)),
    readLog: (id) => inner.readLog(id),
    acquire: (id, opts) => inner.acquire(id, opts),
  };
}

const model = scriptedModel((call) => {
  say(`CALL ${call.callSeq} ${createHash('sha256').update(JSON.stringify(call.messages)).digest('hex')}`);
  return reply(call);
}, { model: 'crash-agent-policy' });

const store = new FileStore({ dir, onWarning: (w) => process.stderr.write(`WARN ${w.code} ${w.message}\n`) });
const agent = defineAgent({
  model,
  interpreter: jsonActionInterpreter(),
  store: killingStore(store),
  events: { params: { sink: 'none' }, deliver: () => undefined },
  syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
});
const request: RunRequest = {
  runId,
  budget: { maxSteps: 20, maxValidActions: 20, maxContextChars: 100_000 },
  executor: tools.executor(),
  tools,
  context: { run: [{ role: 'system', content: [{ type: 'text', text: 'You add numbers and record notes. Reply with JSON.' }] }], goal: [{ role: 'user', content: [{ type: 'text', text: 'Add, record, and finish.' }] }] },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: process.env['CRASH_MODEL_POLICY'] === 'never' ? 'never' : 'safe',
  observationTemplate: 'Observation:\n{observation}',
  toolRenderStyle: 'json',
  cancelGraceMs: 1000,
};

let result;
if (mode === 'run') {
  result = await run(agent, request);
} else {
  try {
    result = await resume(agent, request);
  } catch (e) {
    if (!isPolyLoopError(e, 'run_not_found')) throw e;
    say('NOTE log empty, starting');
    result = await run(agent, request);
  }
}
say(`RESULT ${JSON.stringify(result)}`);
