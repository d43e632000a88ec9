/**
 * A fake payment API on loopback HTTP, and the agent that pays through it: the outside world of
 * the stalled-driver trials. The API deduplicates payments by their idempotency key, as real
 * payment APIs do, and counts every attempt, so a test sees both the effects and the tries.
 *
 * The agent's `pay` tool is `never` (a payment must not repeat) and slow: it tells the API it is
 * inside (`/entered`, whose reply the test may hold back while it stops the process), waits
 * `waitMs` (telling the API `/sleeping` as it starts), then pays. How it behaves is its `honours`:
 * `signal` — it passes `ctx.signal` to its wait and its request and checks it before paying, with
 * a fresh key each attempt; `key` — it ignores the signal and pays with `ctx.resultId` as the key;
 * `neither` — it ignores the signal and pays with a fresh key.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defineAgent, isPolyLoopError, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from '../../src/core/index.ts';
import type { AgentDefinition, RunStore } from '../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../src/testing/index.ts';
import { sleep } from '../../src/testing/scripted-model.ts';

/** What a handler honours of the two things that make a stalled driver's late effect harmless. */
export type Honours = 'signal' | 'key' | 'neither';

/** Where a handler tells the API it is: on entering the action, and as its slow wait starts. */
export type Checkpoint = 'entered' | 'sleeping';

/** A call of the API's `/entered` or `/sleeping`, as a test's hook sees it. */
export type Arrival = { readonly runId: string; readonly pid: number; readonly at: Checkpoint };

/** The fake payment API. */
export type PaymentService = {
  readonly url: string;
  /** Payments that took effect for the run (one per distinct key). */
  effects(runId: string): number;
  /** Calls of `/pay` for the run, duplicates included. */
  attempts(runId: string): number;
  /** Arrivals at `/entered` and `/sleeping`, in order. */
  readonly arrivals: Arrival[];
  /** Called at each arrival; the API answers it once the returned promise settles. */
  hook: ((arrival: Arrival) => Promise<void>) | null;
  close(): Promise<void>;
};

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Start the API on a free loopback port. */
export async function startPaymentService(): Promise<PaymentService> {
  const keys = new Map<string, Set<string>>();
  const tries = new Map<string, number>();
  const service: PaymentService = {
    url: '',
    effects: (runId) => keys.get(runId)?.size ?? 0,
    attempts: (runId) => tries.get(runId) ?? 0,
    arrivals: [],
    hook: null,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const b = await body(req);
    const runId = String(b['runId']);
    if (req.url === '/pay') {
      tries.set(runId, (tries.get(runId) ?? 0) + 1);
      const seen = keys.get(runId) ?? new Set<string>();
      keys.set(runId, seen);
      const duplicate = seen.has(String(b['key']));
      seen.add(String(b['key']));
      res.end(JSON.stringify({ duplicate }));
      return;
    }
    const arrival: Arrival = { runId, pid: Number(b['pid']), at: req.url === '/entered' ? 'entered' : 'sleeping' };
    service.arrivals.push(arrival);
    await service.hook?.(arrival);
    res.end('{}');
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  });
  // A stopped client's connection must not hold the server open at the end.
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(service, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

/** Options of {@link paymentAgent}. */
export type PaymentAgentOptions = {
  readonly url: string;
  readonly honours: Honours;
  /** How long the handler's slow part takes. */
  readonly waitMs: number;
  /** Told when the handler starts an attempt. */
  readonly onHandlerStart?: () => void;
  /** Told how the handler's attempt ended: `paid`, or the code (or message) of what stopped it. */
  readonly onHandlerEnd?: (outcome: string) => void;
};

async function post(url: string, payload: object, signal?: AbortSignal): Promise<void> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(payload), ...(signal ? { signal } : {}) });
  await res.text();
}

/** The agent: pay once, then answer. The same definition in every process, so any can resume any run. */
export function paymentAgent(store: RunStore, opts: PaymentAgentOptions): AgentDefinition {
  const { url, honours, waitMs } = opts;
  const tools = ToolRegistry.of([
    {
      name: 'pay',
      description: 'Pay the invoice (must not repeat).',
      replayPolicy: 'never',
      parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      handler: async ({ amount }, ctx) => {
        const signal = honours === 'signal' ? ctx.signal : undefined;
        const who = { runId: ctx.runId, pid: process.pid };
        opts.onHandlerStart?.();
        try {
          await post(`${url}/entered`, who, signal);
          const slow = sleep(waitMs, signal);
          void post(`${url}/sleeping`, who).catch(() => undefined);
          await slow;
          signal?.throwIfAborted();
          const key = honours === 'key' ? ctx.resultId : crypto.randomUUID();
          await post(`${url}/pay`, { ...who, key, amount }, signal);
          opts.onHandlerEnd?.('paid');
          return 'paid';
        } catch (e) {
          opts.onHandlerEnd?.(isPolyLoopError(e) ? e.code : String(e));
          throw e;
        }
      },
    },
  ]);
  return defineAgent({
    model: scriptedModel(['{"tool":"pay","args":{"amount":5}}', '{"final":"paid"}']),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
    defaults: {
      tools,
      executor: tools.executor(),
      toolRenderStyle: 'none',
      cancelGraceMs: 1_000,
      budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 10_000 },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe',
      observationTemplate: '{observation}',
    },
  });
}
