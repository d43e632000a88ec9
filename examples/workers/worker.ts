/**
 * The demo Worker entry (`wrangler.toml` `main`): the demo agent behind the PolyLoop HTTP app.
 * `npm run dev` serves it on 127.0.0.1:8787; the workerd tests run against it. An example, not
 * part of `polyloop/workers`: the demo agent uses the test kit (`polyloop/testing`).
 * @module
 */
import { demoSetup } from './demo-agent.ts';
import { createApp, createRunObject } from '../../src/platform-workers/index.ts';
import type { RunIndexNamespace, RunObjectBase } from '../../src/platform-workers/index.ts';

export { RunIndex } from '../../src/platform-workers/index.ts';

/** The demo Worker's bindings (see `wrangler.toml`). */
export type DemoEnv = {
  readonly RUNS: DurableObjectNamespace<RunObjectBase<DemoEnv>>;
  readonly RUN_INDEX: RunIndexNamespace;
  readonly POLYLOOP_TOKEN?: string;
};

/** The run Durable Object of the demo (`class_name = "RunObject"`). */
export class RunObject extends createRunObject<DemoEnv>({ setup: demoSetup, index: (env) => env.RUN_INDEX }) {}

/** The example page's origins (`npm run example:web`), which may follow a run of this Worker from the browser (not exported: a Worker module exports handlers and classes only). */
const EXAMPLE_PAGE_ORIGINS = ['http://127.0.0.1:5173', 'http://localhost:5173'];

/** The HTTP app: every route behind `Authorization: Bearer $POLYLOOP_TOKEN`; runs listed by `GET /runs`; CORS for the example page. */
export default createApp<DemoEnv>({
  runs: (env) => env.RUNS,
  index: (env) => env.RUN_INDEX,
  cors: { origins: EXAMPLE_PAGE_ORIGINS },
});
