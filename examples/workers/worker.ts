/**
 * The demo Worker entry (`wrangler.toml` `main`): the demo agent behind the PolyLoop HTTP app.
 * `npm run dev` serves it on 127.0.0.1:8787; the workerd tests run against it.
 * @module
 */
import { demoSetup } from './demo-agent.ts';
import { createApp, createRunObject } from './index.ts';
import type { RunObjectBase } from './index.ts';

/** The demo Worker's bindings (see `wrangler.toml`). */
export type DemoEnv = {
  readonly RUNS: DurableObjectNamespace<RunObjectBase<DemoEnv>>;
  readonly POLYLOOP_TOKEN?: string;
};

/** The run Durable Object of the demo (`class_name = "RunObject"`). */
export class RunObject extends createRunObject<DemoEnv>({ setup: demoSetup }) {}

/** The HTTP app: every route behind `Authorization: Bearer $POLYLOOP_TOKEN`. */
export default createApp<DemoEnv>({ runs: (env) => env.RUNS });
