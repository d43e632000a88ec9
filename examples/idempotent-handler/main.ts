/**
 * A payment a stalled driver cannot make twice (docs/api.md#a-handlers-signal-and-its-idempotency-key).
 * The `pay` handler passes `ctx.signal` to its request, and keys the payment on the run id and
 * `ctx.resultId`, which every attempt of the call shares.
 *
 * The story, in one process: driver A sends the payment and its request stalls on the way. A's
 * lease is lost meanwhile (as PostgresStore's is when a driver stalls past `leaseMs`): its run
 * rejects with `LeaseLostError` and writes nothing more. Driver B resumes the run; the payment
 * was in flight and must not repeat unasked, so a person settles it: the payment API shows no
 * charge, so they answer `retry`, and B pays. Then A's stalled request arrives: same key, so the
 * API hands back B's charge and charges nothing. One payment.
 *
 * Run: npx tsx examples/idempotent-handler/main.ts
 */
import { pathToFileURL } from 'node:url';
import {
  defineAgent,
  InMemoryStore,
  jsonActionInterpreter,
  LeaseLostError,
  resume,
  run,
  silentSink,
  STANDARD_SYNTHETIC_OBSERVATIONS,
  ToolRegistry,
} from '../../src/core/index.ts';
import type {
  AgentDefinition,
  InputReply,
  InputRequest,
  ModelCaller,
  ReleaseLease,
  ToolSpec,
} from '../../src/core/index.ts';
import { startPaymentApi } from './payment-api.ts';
import type { Charge, PaymentApi } from './payment-api.ts';

/** The key of one call: the same on every attempt of it, and no other call's, in any run. */
export const chargeKey = (runId: string, resultId: string): string => encodeURIComponent(`${runId}:${resultId}`);

export function payTool(api: string): ToolSpec {
  return {
    name: 'pay',
    description: 'Pay an amount to someone.',
    parameters: {
      type: 'object',
      properties: { amount: { type: 'integer', minimum: 1 }, to: { type: 'string' } },
      required: ['amount', 'to'],
    },
    replayPolicy: 'never',
    handler: async (args, ctx) => {
      const res = await fetch(`${api}/charges`, {
        method: 'POST',
        // Every attempt of this call (a person's retry, a stalled driver waking) sends the same key.
        headers: { 'content-type': 'application/json', 'idempotency-key': chargeKey(ctx.runId, ctx.resultId) },
        body: JSON.stringify({ amount: args['amount'], to: args['to'] }),
        signal: ctx.signal, // aborted when the driver loses its lease or a stop is requested
      });
      if (!res.ok) throw new Error(`the payment API answered ${res.status}`);
      const charge = (await res.json()) as Charge;
      return `charged ${charge.amount} to ${charge.to} (${charge.id})`;
    },
  };
}

/**
 * InMemoryStore with a lease that can be lost, as PostgresStore's is when its driver stalls past
 * `leaseMs`: the holder's `lost` signal aborts with `LeaseLostError`, and the run is free to take.
 */
class LosableLeaseStore extends InMemoryStore {
  readonly #held = new Map<string, { readonly release: ReleaseLease; readonly lost: AbortController }>();
  override async acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    const release = await super.acquire(runId, opts);
    const lost = new AbortController();
    // A stop still reaches the driver.
    if (release.lost?.aborted) lost.abort(release.lost.reason);
    else release.lost?.addEventListener('abort', () => lost.abort(release.lost?.reason), { once: true });
    this.#held.set(runId, { release, lost });
    return Object.assign(() => release(), { lost: lost.signal });
  }
  loseLease(runId: string): void {
    const held = this.#held.get(runId);
    held?.lost.abort(new LeaseLostError(runId, 'it stalled past its lease; another driver may take the run'));
    void held?.release();
  }
}

/** A stand-in model: pays 40 to acme, then answers with what it saw. */
const model: ModelCaller = {
  params: { model: 'pay-then-answer' },
  async call({ messages, callSeq }) {
    const last = messages.at(-1)?.content.at(-1);
    const seen = last?.type === 'text' ? last.text : '';
    const reply = callSeq === 0 ? { tool: 'pay', args: { amount: 40, to: 'acme' } } : { final: seen };
    return { callId: `local-${callSeq}`, text: JSON.stringify(reply), reasoning: null };
  },
};

function paymentAgent(store: LosableLeaseStore, api: string): AgentDefinition {
  const tools = ToolRegistry.of([payTool(api)]);
  return defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store,
    events: silentSink(),
    syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
    defaults: {
      tools,
      executor: tools.executor(),
      budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 50_000 },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: '{observation}',
      toolRenderStyle: 'none',
      cancelGraceMs: 1_000,
    },
  });
}

/** What a person answers about a payment in doubt, from a look at the payment API. */
async function settle(api: string, runId: string, pending: InputRequest): Promise<InputReply> {
  const key = chargeKey(runId, pending.resultId.replace(/\.settle$/, ''));
  const found = await fetch(`${api}/charges/${key}`);
  if (found.status === 404) return { kind: 'retry', resultId: pending.resultId };
  const charge = (await found.json()) as Charge;
  return { kind: 'executed', resultId: pending.resultId, observation: `charged ${charge.amount} (${charge.id})` };
}

export type Story = {
  readonly driverA: string;
  /** The kinds of the records in the log once driver A gave up. */
  readonly logAfterA: readonly string[];
  readonly asked: string | null;
  readonly answered: InputReply['kind'];
  readonly driverB: string;
  readonly finalAnswer: string | null;
  readonly charges: readonly Charge[];
  readonly requests: number;
};

export async function stalledDriverStory(): Promise<Story> {
  const api: PaymentApi = await startPaymentApi();
  try {
    const store = new LosableLeaseStore();
    const agent = paymentAgent(store, api.url);
    const runId = 'order-7';
    const stalled = api.holdNext();
    // Driver A: its payment request leaves, and stalls on the way.
    const a = run(agent, { runId, goal: 'Pay acme 40.' }).then(
      (r) => r.stopReason,
      (e: unknown) => (e instanceof Error ? e.name : String(e)),
    );
    await stalled.arrived;
    store.loseLease(runId);
    const driverA = await a;
    const logAfterA = (await store.readLog(runId)).map((r) => r.kind);
    // Driver B: the payment was in flight, so a person is asked; the API shows no charge yet.
    const asked = await resume(agent, runId);
    const reply = await settle(api.url, runId, asked.pending as InputRequest);
    const done = await resume(agent, runId, { input: reply });
    // A's stalled request arrives at last: the key is B's, so nothing more is charged.
    await stalled.deliver();
    return {
      driverA,
      logAfterA,
      asked: asked.pending?.kind ?? null,
      answered: reply.kind,
      driverB: done.stopReason,
      finalAnswer: done.finalAnswer,
      charges: api.charges(),
      requests: api.received(),
    };
  } finally {
    await api.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const s = await stalledDriverStory();
  console.log(`driver A: ${s.driverA}, wrote nothing more`);
  console.log(`driver B: asked to ${s.asked}, answered ${s.answered}, ended ${s.driverB}: ${s.finalAnswer}`);
  console.log(`payment requests: ${s.requests}, charges: ${s.charges.length}`);
}
