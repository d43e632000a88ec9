/**
 * The page of the browser-kill suite (bundled with esbuild, loaded by a Chromium the test
 * SIGKILLs). On load it reads its run's log from IndexedDB, reports it to the Node server, then
 * starts or resumes the run. Everything the outside world must be able to rely on goes to that
 * server and is awaited: a tool's side effect (before the tool returns) and the acknowledgement
 * of every store write (after its promise resolved). A `never` action in flight at the kill comes
 * back as a settle request: the page asks the server's side-effect log whether it
 * happened and answers `executed` (with what the tool returns) or `retry`, as a person who can look
 * at the outside world would. Query: `run`, `launch`, `think`, `tool` (ms),
 * and `barrier=skip`: a deliberately broken page whose action intents resolve before they are
 * durable, to show the suite catches a missing barrier.
 */
import { defineAgent, isBarrier, isPolyLoopError, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type {
  EventSink,
  InputReply,
  InputRequest,
  IntentRecord,
  LogRecord,
  ModelCall,
  RunRequest,
  RunResult,
  RunStore,
} from '../../../src/core/index.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { sleep } from '../../../src/testing/scripted-model.ts';

/** The actions the model asks for, in order: `quote` is `safe`, `charge` is `never`. */
const PLAN = [
  { tool: 'quote', args: { item: 'tea' } },
  { tool: 'charge', args: { order: 'A-1' } },
  { tool: 'quote', args: { item: 'cake' } },
  { tool: 'charge', args: { order: 'A-2' } },
  { tool: 'quote', args: { item: 'jam' } },
  { tool: 'charge', args: { order: 'A-3' } },
] as const;

const query = new URLSearchParams(location.search);
const runId = query.get('run') ?? 'kill';
const launch = Number(query.get('launch') ?? 0);
const skipBarrier = query.get('barrier') === 'skip';
const pace = { thinkMs: Number(query.get('think') ?? 30), toolMs: Number(query.get('tool') ?? 40) };
const store = new IndexedDBStore({ dbName: 'polyloop-browser-kill' });

/** POST to the test's server and wait for its 200: the server is the world outside the browser. */
async function post(path: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ runId, launch, ...body }),
  });
  if (!res.ok) throw new Error(`${path} answered ${res.status}`);
}

/** The model: the next planned action after as many observations as it has seen, then an answer. */
function policy(call: ModelCall): string {
  const seen = call.messages.filter(
    (m) => m.role === 'user' && m.content.some((b) => b.type === 'text' && b.text.startsWith('Observation:')),
  ).length;
  const next = PLAN[seen];
  return JSON.stringify(next ?? { final: `done after ${seen} actions` });
}

/** What a tool returns once its side effect happened: also what a settled `executed` reply says. */
const observationOf = (name: string, value: unknown): string => `${name} ${String(value)}: ok`;

/** A tool whose side effect happens in the Node process, before the tool returns. */
function tool(name: string, replayPolicy: 'safe' | 'never', key: string) {
  return {
    name,
    description: `${name} (${replayPolicy})`,
    parameters: {
      type: 'object',
      properties: { [key]: { type: 'string' } },
      required: [key],
      additionalProperties: false,
    },
    replayPolicy,
    handler: async (args: Readonly<Record<string, unknown>>) => {
      await post('/effect', { tool: name, args });
      await sleep(pace.toolMs);
      return observationOf(name, args[key]);
    },
  } as const;
}

/** What a record is, for the server: its kind and the resultId or step index that names it. */
function label(rec: LogRecord): Record<string, unknown> {
  if (rec.kind === 'intent' || rec.kind === 'result' || rec.kind === 'input_request' || rec.kind === 'input')
    return { kind: rec.kind, resultId: rec.resultId };
  if (rec.kind === 'step') return { kind: 'step', stepIndex: rec.step.stepIndex };
  return { kind: rec.kind };
}

/**
 * The store as the run sees it: each write is acknowledged to the server once it resolved, with
 * `barrier` saying whether the contract promised it durable by then (`isBarrier`; a joint write is
 * one barrier) or only in order with the next barrier.
 */
function acknowledging(inner: IndexedDBStore): RunStore {
  const acked = async (write: Promise<void>, rec: LogRecord): Promise<void> => {
    await write;
    await post('/ack', { ...label(rec), barrier: isBarrier(rec) });
  };
  const unsafeIntent = async (id: string, rec: IntentRecord): Promise<void> => {
    // The broken variant: the write goes on in the background, its failure lost, and the tool
    // runs at once. Not acknowledged, so only the side effects can give it away.
    inner.intent(id, rec).catch(() => undefined);
  };
  return {
    runStarted: (id, rec) => acked(inner.runStarted(id, rec), rec),
    intent: (id, rec) =>
      skipBarrier && rec.intent === 'action' ? unsafeIntent(id, rec) : acked(inner.intent(id, rec), rec),
    result: (id, resultId, rec) => acked(inner.result(id, resultId, rec), rec),
    // One transaction for both records, as the loop writes them; each acknowledged once it resolved.
    resultAndIntent: async (id, result, intent) => {
      if (skipBarrier)
        return acked(inner.result(id, result.resultId, result), result).then(() => unsafeIntent(id, intent));
      await inner.resultAndIntent(id, result, intent);
      await post('/ack', { ...label(result), barrier: true });
      await post('/ack', { ...label(intent), barrier: true });
    },
    step: (id, rec) => acked(inner.step(id, rec), rec),
    runEnded: (id, rec) => acked(inner.runEnded(id, rec), rec),
    inputRequest: (id, rec) => acked(inner.inputRequest(id, rec), rec),
    input: (id, rec) => acked(inner.input(id, rec), rec),
    readLog: (id) => inner.readLog(id),
    acquire: (id, opts) => inner.acquire(id, opts),
  };
}

const events: EventSink = {
  params: { sink: 'browser-kill' },
  deliver: async (e) => {
    if (e.type === 'run_started') await post('/report', { type: 'started', resumed: e.resumed, fromStep: e.fromStep });
  },
};

const agent = defineAgent({
  model: scriptedModel(policy, { model: 'browser-kill-plan', delayMs: pace.thinkMs }),
  interpreter: jsonActionInterpreter(),
  store: acknowledging(store),
  events,
  syntheticObservations: { notExecuted: 'Not executed.', envError: 'The shop failed.' },
});

const tools = ToolRegistry.of([tool('quote', 'safe', 'item'), tool('charge', 'never', 'order')]);
const request: RunRequest = {
  runId,
  budget: { maxSteps: 12, maxValidActions: 10, maxContextChars: 50_000 },
  executor: tools.executor(),
  tools,
  context: {
    run: [{ role: 'system', content: [{ type: 'text', text: 'Quote, then charge. Reply with JSON actions.' }] }],
    goal: [{ role: 'user', content: [{ type: 'text', text: 'Buy tea, cake and jam.' }] }],
  },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe',
  observationTemplate: 'Observation:\n{observation}',
  toolRenderStyle: 'json',
  cancelGraceMs: 1000,
};

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/** Settle an operation in doubt from the outside world: did the server record its side effect? */
async function settle(pending: InputRequest): Promise<InputReply> {
  const action = pending.decision?.action;
  if (pending.kind !== 'settle')
    throw new Error(`this run asks no person, yet it awaits ${pending.kind} ${pending.resultId}`);
  if (pending.target !== 'action' || action?.kind !== 'tool_call') return { kind: 'retry', resultId: pending.resultId };
  const res = await fetch('/settle', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ runId, launch, tool: action.name, args: action.arguments }),
  });
  if (!res.ok) throw new Error(`/settle answered ${res.status}`);
  const { happened } = (await res.json()) as { happened: boolean };
  // Each tool takes exactly one argument (additionalProperties: false): its value is in the observation.
  const value = Object.values(action.arguments as Readonly<Record<string, unknown>>)[0];
  return happened
    ? { kind: 'executed', resultId: pending.resultId, observation: observationOf(action.name, value) }
    : { kind: 'retry', resultId: pending.resultId };
}

/** Read the log as the kill left it, report it, drive the run to its end (settling what is in doubt), report the final log. */
async function boot(): Promise<void> {
  const found = await store.readLog(runId);
  await post('/report', { type: 'boot', log: found });
  let result: RunResult = found.length === 0 ? await run(agent, request) : await resume(agent, request);
  while (result.pending) {
    const reply = await settle(result.pending);
    await post('/report', { type: 'settled', resultId: reply.resultId, kind: reply.kind });
    result = await resume(agent, request, { input: reply });
  }
  const log = await store.readLog(runId);
  const meta = (await store.listRuns()).find((r) => r.runId === runId) ?? null;
  await post('/report', { type: 'ended', stopReason: result.stopReason, log, meta });
}

addEventListener('error', (e) => void post('/report', { type: 'error', message: `uncaught: ${e.message}` }));
addEventListener(
  'unhandledrejection',
  (e) => void post('/report', { type: 'error', message: `unhandled: ${describe(e.reason)}` }),
);
boot().catch((e: unknown) =>
  post('/report', { type: 'error', message: describe(e), code: isPolyLoopError(e) ? e.code : null }),
);
