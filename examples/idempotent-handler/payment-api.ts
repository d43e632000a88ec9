/**
 * A stand-in for a payment provider, on loopback: `POST /charges` with an `Idempotency-Key` header
 * charges once per key — a second request with the same key gets the first one's charge back and
 * charges nothing, as real payment APIs do. `GET /charges/<key>` looks a charge up (what a person
 * checks before settling a payment that was in flight).
 *
 * `holdNext()` parks the next charge request once it has arrived, until `deliver()`: a request
 * stuck on its way, as from a process paused mid-send — the example's stalled driver.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Charge = { readonly id: string; readonly key: string; readonly amount: number; readonly to: string };

/** A charge request parked on its way: `arrived` once the API has it, `deliver()` lets it through. */
export type HeldRequest = { readonly arrived: Promise<void>; deliver(): Promise<void> };

export type PaymentApi = {
  readonly url: string;
  /** Every charge made: one per key. */
  readonly charges: () => readonly Charge[];
  /** How many charge requests came in, repeats included. */
  readonly received: () => number;
  holdNext(): HeldRequest;
  close(): Promise<void>;
};

type Hold = { arrived: () => void; gate: Promise<void>; processed: () => void };

export async function startPaymentApi(): Promise<PaymentApi> {
  const charges = new Map<string, Charge>();
  let received = 0;
  let hold: Hold | null = null;

  async function charge(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string') return send(res, 400, { error: 'an Idempotency-Key header is required' });
    const { amount, to } = JSON.parse(await bodyOf(req)) as { amount: number; to: string };
    received++;
    const parked = hold;
    hold = null;
    if (parked) {
      parked.arrived();
      await parked.gate;
    }
    const existing = charges.get(key);
    if (!existing) charges.set(key, { id: `ch_${charges.size + 1}`, key, amount, to });
    parked?.processed();
    send(res, existing ? 200 : 201, charges.get(key));
  }

  const server = createServer((req, res) => {
    res.on('error', () => undefined); // a client that gave up (its signal aborted) reads no answer
    if (req.method === 'POST' && req.url === '/charges') return void charge(req, res).catch(() => res.destroy());
    const found = req.method === 'GET' && req.url?.startsWith('/charges/') ? req.url.slice(9) : null;
    const known = found === null ? undefined : charges.get(found);
    send(res, known ? 200 : 404, known ?? { error: 'no such charge' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    charges: () => [...charges.values()],
    received: () => received,
    holdNext() {
      let deliver!: () => void;
      let processed!: () => void;
      const gate = new Promise<void>((r) => (deliver = r));
      const done = new Promise<void>((r) => (processed = r));
      const arrived = new Promise<void>((r) => (hold = { arrived: r, gate, processed }));
      return {
        arrived,
        deliver: () => {
          deliver();
          return done;
        },
      };
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}
