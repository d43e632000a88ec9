// Bindings of the demo Worker as the workerd tests see them (wrangler.toml + vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    RUNS: DurableObjectNamespace<import('../../src/platform-workers/run-object.ts').RunObjectBase<Env>>;
    POLYLOOP_TOKEN: string;
    PROBES: DurableObjectNamespace<import('../../src/platform-workers/run-object.ts').RunObjectBase<Env>>;
  }
  interface Exports {
    default: Fetcher;
  }
}
