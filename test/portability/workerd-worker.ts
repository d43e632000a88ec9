/**
 * A Worker for Miniflare that writes the workerd fixtures: a Durable Object per cut runs the
 * reference on a `DurableObjectStore` over its own SQLite storage, crashes it at the cut and
 * answers with the exported log. `GET /?cut=<cut>`.
 */
import { DurableObjectStore } from '../../src/platform-workers/index.ts';
import type { DurableObjectSqlStorage } from '../../src/platform-workers/index.ts';
import { CUTS, fixtureOf } from './cuts.ts';
import type { Cut } from './cuts.ts';

type Env = {
  readonly FIXTURES: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(req: Request): Promise<Response> };
  };
};

export default {
  fetch(req: Request, env: Env): Promise<Response> {
    const cut = new URL(req.url).searchParams.get('cut') ?? '';
    return env.FIXTURES.get(env.FIXTURES.idFromName(cut)).fetch(req);
  },
};

/** One object per cut, so each fixture is written into fresh storage. */
export class FixtureObject {
  readonly #storage: DurableObjectSqlStorage;

  constructor(ctx: { readonly storage: DurableObjectSqlStorage }) {
    this.#storage = ctx.storage;
  }

  async fetch(req: Request): Promise<Response> {
    const cut = new URL(req.url).searchParams.get('cut') as Cut;
    if (!CUTS.includes(cut)) return new Response(`unknown cut ${cut}`, { status: 400 });
    try {
      // The cut point comes from a counting run in memory (the same writes on any store).
      const ndjson = await fixtureOf(new DurableObjectStore(this.#storage), cut);
      return new Response(ndjson, { headers: { 'content-type': 'application/x-ndjson' } });
    } catch (e) {
      return new Response(String(e instanceof Error ? e.stack : e), { status: 500 });
    }
  }
}
