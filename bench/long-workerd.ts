/**
 * `node --experimental-websocket --import tsx bench/long-workerd.ts [--n=100000]`: the long run on
 * DurableObjectStore in real workerd (Miniflare, SQLite storage persisted on disk; the object is
 * test/workers/fixtures/long-worker.ts). workerd shows an object nothing of its own heap, so at
 * every reading the object asks this script (a `PROBE` service binding) and it looks from outside:
 * over workerd's DevTools inspector, `Runtime.getHeapUsage` of the Worker's isolate (needs a global
 * WebSocket: Node 22, or Node 20 with the flag above) — with no forced GC: workerd answers
 * `HeapProfiler.collectGarbage` only once the request in flight has ended, so mid-run the used
 * heap includes garbage not yet collected and the figure is an upper bound of what is live — and
 * the workerd process's resident set (VmRSS), printed beside the table. Also prints what bounds the
 * object: its largest row (2 MB a row or string) and its database's size (10 GB an object).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { bundleWorker, ROOT } from '../test/node/platform-workers/miniflare-harness.ts';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 100_000);
const INSPECTOR = 9300 + (process.pid % 500);

/** The resident set of this process's workerd child, bytes (0 when it cannot be found). */
async function workerdRss(): Promise<number> {
  const { stdout } = await promisify(execFile)('pgrep', ['-P', String(process.pid), 'workerd']).catch(() => ({
    stdout: '',
  }));
  const pid = stdout.trim().split('\n')[0];
  if (!pid) return 0;
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

/** A DevTools session on the Worker's isolate, or null where no WebSocket or inspector is there. */
async function inspector(): Promise<((method: string) => Promise<Record<string, unknown>>) | null> {
  if (typeof WebSocket !== 'function') return null;
  const list = (await (await fetch(`http://127.0.0.1:${INSPECTOR}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = list[0]?.webSocketDebuggerUrl;
  if (!url) return null;
  const ws = new WebSocket(url);
  await new Promise((ok, fail) => {
    ws.onopen = ok;
    ws.onerror = fail;
  });
  const waiting = new Map<number, (v: Record<string, unknown>) => void>();
  ws.onmessage = (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, unknown> };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result ?? {});
  };
  let id = 0;
  return (method) =>
    new Promise((ok) => {
      waiting.set(++id, ok);
      ws.send(JSON.stringify({ id, method }));
    });
}

const rss: number[] = [];
let cdp: Awaited<ReturnType<typeof inspector>> = null;
const dir = await mkdtemp(join(tmpdir(), 'polyloop-bench-long-workerd-'));
const mf = new Miniflare({
  modules: true,
  script: await bundleWorker(join(ROOT, 'test/workers/fixtures/long-worker.ts')),
  compatibilityDate: '2026-04-20',
  durableObjects: { LONG: { className: 'LongObject', useSQLite: true } },
  durableObjectsPersist: dir,
  inspectorPort: INSPECTOR,
  serviceBindings: {
    async PROBE() {
      try {
        rss.push(await workerdRss());
        if (!cdp) return Response.json({ heap: null });
        const usage = await cdp('Runtime.getHeapUsage');
        const used = usage['usedSize'] as number | undefined;
        // Progress on stderr: a 100,000-step run takes minutes, and its rate tells whether it will finish.
        const mib = (b: number | undefined): string => ((b ?? 0) / 2 ** 20).toFixed(0);
        console.error(
          `${new Date().toISOString()} reading ${rss.length}: heap ${mib(used)} MiB, rss ${mib(rss.at(-1))} MiB`,
        );
        return Response.json({ heap: used ?? null });
      } catch (e) {
        console.error('the heap probe failed:', e);
        return Response.json({ heap: null });
      }
    },
  },
});
try {
  await mf.ready;
  cdp = await inspector().catch(() => null);
  const res = await mf.dispatchFetch(`http://long.test/long?n=${N}`);
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const out = (await res.json()) as {
    text: string;
    limits: { maxRow: number; rows: number };
    maxRecord: { bytes: number; seq: number };
    databaseSize: number;
  };
  console.log(out.text);
  const heapSource = cdp
    ? "the isolate's used heap over the inspector, no forced GC (upper bound of live)"
    : 'none (no inspector session)';
  console.log(`heap readings: ${heapSource}`);
  console.log(`workerd VmRSS at each reading (MiB): ${rss.map((b) => (b / 2 ** 20).toFixed(0)).join(', ')}`);
  console.log(
    `rows ${out.limits.rows}, largest row ${out.limits.maxRow} bytes, largest record ${out.maxRecord.bytes} bytes ` +
      `(seq ${out.maxRecord.seq}), database ${out.databaseSize} bytes`,
  );
  console.log(`LONG WORKERD ${JSON.stringify(out)}`);
} finally {
  await mf.dispose();
  await rm(dir, { recursive: true, force: true });
}
