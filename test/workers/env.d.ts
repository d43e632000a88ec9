// Bindings of the demo Worker as the workerd tests see them (wrangler.toml + vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    RUNS: DurableObjectNamespace<import('../../src/platform-workers/run-object.ts').RunObjectBase<Env>>;
    RUN_INDEX: DurableObjectNamespace<import('../../src/platform-workers/run-index.ts').RunIndex>;
    POLYLOOP_TOKEN: string;
    PROBES: DurableObjectNamespace<import('../../src/platform-workers/run-object.ts').RunObjectBase<Env>>;
    CHAT_PROBES: DurableObjectNamespace<
      import('../../src/platform-workers/chat-turn-object.ts').ChatTurnObjectBase<Env>
    >;
    TRACED_CHAT: DurableObjectNamespace<
      import('../../src/platform-workers/chat-turn-object.ts').ChatTurnObjectBase<Env>
    >;
    FAMILY: DurableObjectNamespace<import('../../src/platform-workers/run-object.ts').RunObjectBase<Env>>;
  }
  interface Exports {
    default: Fetcher;
  }
}
