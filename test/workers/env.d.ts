declare namespace Cloudflare {
  interface Env {
    RUNS: DurableObjectNamespace;
    POLYLOOP_TOKEN: string;
  }
}
