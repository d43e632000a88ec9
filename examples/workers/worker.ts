/**
 * The demo Worker entry (`wrangler.toml` `main`): the demo agent behind the PolyLoop HTTP app.
 * `npm run dev` serves it on 127.0.0.1:8787; the workerd tests run against it. An example, not
 * part of `polyloop/workers`: the demo agent uses the test kit (`polyloop/testing`).
 * @module
 */
import { demoSetup } from './demo-agent.ts';
import { createApp, createRunObject } from '../../src/platform-workers/index.ts';
import type { RunObjectBase } from '../../src/platform-workers/index.ts';

/** The demo Worker's bindings (see `wrangler.toml`). */
export type DemoEnv = {
  readonly RUNS: DurableObjectNamespace<RunObjectBase<DemoEnv>>;
  readonly POLYLOOP_TOKEN?: string;
};

/** The run Durable Object of the demo (`class_name = "RunObject"`). */
export class RunObject extends createRunObject<DemoEnv>({ setup: demoSetup }) {}

/** The HTTP app: every route behind `Authorization: Bearer $POLYLOOP_TOKEN`. */
export default createApp<DemoEnv>({ runs: (env) => env.RUNS });
