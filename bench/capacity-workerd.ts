/**
 * `npm run bench:capacity-workerd` (docs/capacity.md): Durable Objects in real workerd (Miniflare,
 * SQLite storage persisted on disk).
 *
 * 1. What one action step costs DurableObjectStore: SQL statements, transactions, `storage.sync()`
 *    calls and the rows workerd reports written and read (Cloudflare's billing units), the bytes
 *    stored (the records' text, and the SQLite file's size) — each the difference between a run of
 *    `n2` and one of `n1` steps, ÷ `n2 − n1`; and the rows one whole read of the log reads (what a
 *    resume, and the run object's alarm, read).
 * 2. `CAPACITY_RUNS` runs (default 10,000) started at once through the HTTP app (`POST /runs`, at
 *    most `CAPACITY_INFLIGHT` requests in flight), each `CAPACITY_STEPS` steps (default 5) with a
 *    model answering after `CAPACITY_DELAY_MS` (default 1,000), followed through the run index
 *    until every run ended: the time, workerd's peak memory, the disk its storage took, failures.
 *
 * `CAPACITY_PART=steps|runs` runs one part only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { bundleWorker, ROOT } from '../test/node/platform-workers/miniflare-harness.ts';

const RUNS = Number(process.env['CAPACITY_RUNS'] ?? 10_000);
const STEPS = Number(process.env['CAPACITY_STEPS'] ?? 5);
const DELAY = Number(process.env['CAPACITY_DELAY_MS'] ?? 1_000);
const INFLIGHT = Number(process.env['CAPACITY_INFLIGHT'] ?? 200);
const PART = process.env['CAPACITY_PART'] ?? 'all';
const TOKEN = 'capacity-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

type Counted = Record<'inserts' | 'selects' | 'transactions' | 'syncs' | 'rowsWritten' | 'rowsRead', number>;
type CountOut = {
  steps: number;
  records: number;
  rows: number;
  bodyBytes: number;
  databaseSize: number;
  emptyDatabaseSize: number;
  write: Counted;
  read: Counted;
};

async function count(mf: Miniflare, n: number, obs: number): Promise<CountOut> {
  const res = await mf.dispatchFetch(`http://capacity.test/count?n=${n}&obs=${obs}&tag=${Date.now()}`);
  if (res.status !== 200) throw new Error(`/count: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as CountOut;
}

async function perStep(mf: Miniflare): Promise<void> {
  const [n1, n2] = [100, 1_100];
  const a = await count(mf, n1, 0);
  const b = await count(mf, n2, 0);
  const span = n2 - n1;
  const d = (f: (o: CountOut) => number): string => ((f(b) - f(a)) / span).toFixed(2);
  console.log(`DurableObjectStore, per action step: (run of ${n2} − run of ${n1}) / ${span}`);
  console.log(`  records ${d((o) => o.records)}, rows ${d((o) => o.rows)}`);
  console.log(`  INSERTs ${d((o) => o.write.inserts)}, SELECTs ${d((o) => o.write.selects)}`);
  console.log(`  transactionSync ${d((o) => o.write.transactions)}, storage.sync() ${d((o) => o.write.syncs)}`);
  console.log(`  rows written (billed) ${d((o) => o.write.rowsWritten)}, rows read ${d((o) => o.write.rowsRead)}`);
  console.log(`  bytes of the records' text ${d((o) => o.bodyBytes)}, SQLite file ${d((o) => o.databaseSize)}`);
  const fixed = (f: (o: CountOut) => number): number => f(a) - ((f(b) - f(a)) / span) * n1;
  console.log(
    `  per run besides its steps: rows written ${fixed((o) => o.write.rowsWritten).toFixed(0)}, ` +
      `SQLite file ${fixed((o) => o.databaseSize).toFixed(0)} bytes (empty database ${a.emptyDatabaseSize})`,
  );
  console.log(
    `  one whole read of the log: rows read ${a.read.rowsRead} (N=${n1}), ${b.read.rowsRead} (N=${n2}); ` +
      `${d((o) => o.read.rowsRead)} a step`,
  );
  console.log(`CAPACITY STEPS ${JSON.stringify({ n1, n2, a, b })}`);
}

/** workerd's resident memory now, and its high-water mark, in bytes (null when it cannot be found). */
async function workerdMemory(): Promise<{ rss: number; hwm: number } | null> {
  let pids: string[];
  try {
    pids = execFileSync('pgrep', ['-P', String(process.pid), 'workerd'], { encoding: 'utf8' })
      .trim()
      .split('\n');
  } catch {
    return null;
  }
  let rss = 0;
  let hwm = 0;
  for (const pid of pids.filter(Boolean)) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
    hwm += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
  }
  return { rss, hwm };
}

async function duSize(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    files++;
    bytes += (await stat(join(e.parentPath, e.name))).size;
  }
  return { bytes, files };
}

/** Run `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

type ListItem = { runId: string; status: string; stopReason: string | null };

async function listAll(mf: Miniflare): Promise<ListItem[]> {
  const out: ListItem[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor === null ? '' : `&cursor=${cursor}`;
    const res = await mf.dispatchFetch(`http://capacity.test/runs?limit=100${q}`, { headers });
    const page = (await res.json()) as { runs: ListItem[]; nextCursor: string | null };
    out.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

async function concurrentRuns(mf: Miniflare, dir: string): Promise<void> {
  const ids = Array.from({ length: RUNS }, (_, i) => `cap-${i}`);
  const failures: string[] = [];
  let peak = { rss: 0, hwm: 0 };
  const sampler = setInterval(async () => {
    const m = await workerdMemory();
    if (m && m.rss > peak.rss) peak = { ...m };
  }, 250);
  const before = await workerdMemory();
  const t0 = performance.now();
  await pool(ids, INFLIGHT, async (runId) => {
    const body = JSON.stringify({ runId, input: { steps: STEPS, modelDelayMs: DELAY } });
    try {
      const res = await mf.dispatchFetch('http://capacity.test/runs', { method: 'POST', headers, body });
      if (res.status !== 201) failures.push(`${runId}: POST /runs ${res.status} ${(await res.text()).slice(0, 200)}`);
      else await res.arrayBuffer();
    } catch (e) {
      failures.push(`${runId}: POST /runs failed: ${String(e)} ${String((e as Error).cause ?? '')}`);
    }
  });
  const startedMs = performance.now() - t0;
  let list: ListItem[] = [];
  for (;;) {
    list = await listAll(mf);
    const open = list.filter((r) => r.status !== 'ended' && r.status !== 'halted').length;
    if (list.length >= RUNS - failures.length && open === 0) break;
    if (performance.now() - t0 > 30 * 60_000) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const allMs = performance.now() - t0;
  clearInterval(sampler);
  const after = await workerdMemory();
  const bad = list.filter((r) => r.status !== 'ended' || r.stopReason !== 'final_answer');
  const outcomes: Record<string, number> = {};
  for (const r of bad) outcomes[`${r.status} ${r.stopReason}`] = (outcomes[`${r.status} ${r.stopReason}`] ?? 0) + 1;
  const disk = await duSize(dir);
  const report = {
    runs: RUNS,
    steps: STEPS,
    modelDelayMs: DELAY,
    inflight: INFLIGHT,
    startedMs: Math.round(startedMs),
    allEndedMs: Math.round(allMs),
    listed: list.length,
    notFinalAnswer: bad.length,
    notFinalAnswerBy: outcomes,
    failures: failures.length,
    workerdRssBefore: before?.rss ?? null,
    workerdPeakRss: peak.rss,
    workerdHwm: after?.hwm ?? null,
    diskBytes: disk.bytes,
    diskFiles: disk.files,
  };
  console.log(
    `${RUNS.toLocaleString('en-US')} runs of ${STEPS} steps (model ${DELAY} ms a call), ${INFLIGHT} POSTs in flight:`,
  );
  console.log(
    `  all started in ${(startedMs / 1000).toFixed(1)} s, all ended in ${(allMs / 1000).toFixed(1)} s ` +
      `(${((RUNS * STEPS) / (allMs / 1000)).toFixed(0)} steps/s)`,
  );
  const mib = (b: number | null | undefined): string => (b == null ? '?' : (b / 2 ** 20).toFixed(0));
  console.log(
    `  workerd RSS ${mib(before?.rss)} MiB before, peak ${mib(peak.rss)} MiB sampled, high-water ${mib(after?.hwm)} MiB`,
  );
  console.log(`  storage on disk ${mib(disk.bytes)} MiB in ${disk.files} files`);
  console.log(`  POSTs failed ${failures.length}; runs not ended with a final answer ${bad.length}`, outcomes);
  for (const f of failures.slice(0, 10)) console.log(`    ${f}`);
  console.log(`CAPACITY RUNS ${JSON.stringify(report)}`);
}

const dir = await mkdtemp(join(tmpdir(), 'polyloop-capacity-workerd-'));
const mf = new Miniflare({
  modules: true,
  script: await bundleWorker(join(ROOT, 'test/workers/fixtures/capacity-worker.ts')),
  compatibilityDate: '2026-04-20',
  durableObjects: {
    RUNS: { className: 'RunObject', useSQLite: true },
    RUN_INDEX: { className: 'RunIndex', useSQLite: true },
    COUNT: { className: 'CountObject', useSQLite: true },
  },
  durableObjectsPersist: dir,
  bindings: { POLYLOOP_TOKEN: TOKEN },
});
try {
  await mf.ready;
  if (PART !== 'runs') await perStep(mf);
  if (PART !== 'steps') await concurrentRuns(mf, dir);
} finally {
  await mf.dispose();
  await rm(dir, { recursive: true, force: true });
}
