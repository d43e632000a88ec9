/**
 * Start the PolyLoop Worker in real workerd through Miniflare, on persisted Durable Object
 * storage, and talk to it over HTTP. The Worker is bundled with esbuild the way a Workers
 * deployment bundles it; workerd refuses `eval`/`new Function`, so code that needs them fails here.
 */
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const TOKEN = 'eviction-test-token';
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Bundle a Worker entry as wrangler would: ESM, neutral platform, workerd conditions, `cloudflare:*` external; `alias` maps import specifiers to files. */
export async function bundleWorker(entry: string, alias: Readonly<Record<string, string>> = {}): Promise<string> {
  const out = await build({
    entryPoints: [entry],
    alias: { ...alias },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    external: ['cloudflare:*'],
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error('esbuild produced no output');
  return file.text;
}

/**
 * A Miniflare instance running `script` with the run object bound as RUNS, storage persisted in
 * `dir`; `serve` also listens on a loopback port; `onStdout` receives each line workerd prints
 * (the Worker's `console.log`), instead of the test's own stdout.
 */
export async function startWorker(
  script: string,
  dir: string,
  serve: { readonly host: string; readonly port: number } | null = null,
  onStdout?: (line: string) => void,
): Promise<Miniflare> {
  const mf = new Miniflare({
    ...serve,
    ...(onStdout
      ? {
          handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
            createInterface({ input: stdout }).on('line', onStdout);
            stderr.pipe(process.stderr);
          },
        }
      : {}),
    modules: true,
    script,
    compatibilityDate: '2026-04-20',
    durableObjects: { RUNS: { className: 'RunObject', useSQLite: true } },
    durableObjectsPersist: dir,
    bindings: { POLYLOOP_TOKEN: TOKEN },
  });
  await mf.ready;
  return mf;
}

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

export async function api<T>(
  mf: Miniflare,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: T }> {
  const res = await mf.dispatchFetch(`http://polyloop.test${path}`, {
    method: init.method ?? 'GET',
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export type LogEvent = { readonly id: number; readonly event: string; readonly record: Record<string, unknown> };

/**
 * Follow a run's SSE log from after `lastId` until `stop(event)` holds (or the stream ends);
 * returns the events read, in order. Rejects when the awaited event does not come in time.
 */
export async function follow(
  mf: Miniflare,
  runId: string,
  lastId: number,
  stop: (e: LogEvent) => boolean,
  timeoutMs = 45_000,
): Promise<LogEvent[]> {
  const deadline = Date.now() + timeoutMs;
  const res = await mf.dispatchFetch(`http://polyloop.test/runs/${runId}/events`, {
    headers: lastId < 0 ? headers : { ...headers, 'last-event-id': String(lastId) },
  });
  if (res.status !== 200 || !res.body) throw new Error(`events: HTTP ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const events: LogEvent[] = [];
  let buffer = '';
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error(`run ${runId}: no awaited event within ${timeoutMs} ms (after ${events.length} events)`)),
          Math.max(0, deadline - Date.now()),
        );
      });
      const { done, value } = await Promise.race([reader.read(), late]).finally(() => clearTimeout(timer));
      if (done) return events;
      buffer += decoder.decode(value, { stream: true });
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const fields = new Map(
          block
            .split('\n')
            .filter((l) => !l.startsWith(':'))
            .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)] as const),
        );
        if (!fields.has('id')) continue;
        const e = {
          id: Number(fields.get('id')),
          event: fields.get('event') ?? '',
          record: JSON.parse(fields.get('data') ?? '{}') as Record<string, unknown>,
        };
        events.push(e);
        if (stop(e)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
