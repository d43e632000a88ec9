/**
 * PostgresStore against a real Postgres server started by this file: the shared RunStore
 * contract (both lease modes), the lease of a dead holder expiring, fencing of a holder that lost
 * its lease, the heartbeat keeping a slow holder's lease, migrate(), and rows as other programs see them.
 */
import { describe, expect, it } from 'vitest';
import { encodeLog, isPolyLoopError } from '../../../src/core/index.ts';
import { migrate, PostgresStore } from '../../../src/platform-postgres/index.ts';
import { SCHEMA_VERSION } from '../../../src/platform-postgres/schema.ts';
import type { PgQuery, PgResult } from '../../../src/platform-postgres/index.ts';
import { runStoreContract } from '../../../src/testing/index.ts';
import { describeContract } from '../../contract/vitest-suite.ts';
import {
  actionIntent,
  modelIntent,
  modelResult,
  started,
  stepWrite,
  writeFullRun,
} from '../../contract/run-store.contract.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describeContract(
  runStoreContract({ name: 'PostgresStore (lease refuses)', makeStore: () => db.freshStore(), lease: 'refuses' }),
);
describeContract(
  runStoreContract({
    name: 'PostgresStore (lease waits)',
    makeStore: () => db.freshStore({ lease: 'wait' }),
    lease: 'waits',
  }),
);

describe('PostgresStore lease across processes', () => {
  it('lets another store take the run once a holder that stopped renewing (a killed process) lets its lease expire', async () => {
    const schema = await db.freshSchema();
    const deadPool = db.newPool();
    // Leases long enough that a loaded machine's pause between two statements cannot expire them.
    const dead = new PostgresStore({ pool: deadPool, schema, leaseMs: 1_500, heartbeatMs: 100 });
    await dead.acquire('r', {});
    await dead.runStarted('r', started('r'));
    // The holder's process dies: its heartbeat stops with its pool.
    await deadPool.end();
    const next = new PostgresStore({ pool: db.pool(), schema, leaseMs: 1_500, heartbeatMs: 100 });
    const refused = await next.acquire('r', {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(refused, 'run_locked'), String(refused)).toBe(true);
    expect(String((refused as Error).message)).toMatch(/held by .* pid \d+, expiring in \d+ ms/);
    await sleep(1_600);
    const release = await next.acquire('r', {});
    await next.intent('r', modelIntent(0));
    expect((await next.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent']);
    await release();
  });

  it("a waiting acquire gets the run as soon as the dead holder's lease expires", async () => {
    const schema = await db.freshSchema();
    // A holder killed a moment ago: its row names it, its lease has 600 ms left, nobody renews it.
    await db
      .pool()
      .query(
        `INSERT INTO ${schema}.runs (run_key, run_id, lease_holder, lease_owner, lease_expires_at) VALUES (sha256(convert_to('"r"', 'UTF8')), 'r', 'killed-token', 'killed', now() + interval '600 milliseconds')`,
      );
    const waiting = new PostgresStore({ pool: db.pool(), schema, lease: 'wait', leaseMs: 600, heartbeatMs: 200 });
    const t0 = Date.now();
    const release = await waiting.acquire('r', {});
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(5_000);
    await release();
  });

  it('refuses every write of a holder whose lease another store took after it expired (fencing), and writes nothing of it', async () => {
    const schema = await db.freshSchema();
    const slow = new PostgresStore({ pool: db.pool(), schema, leaseMs: 5_000, heartbeatMs: 1_000 });
    const releaseSlow = await slow.acquire('r', {});
    await slow.runStarted('r', started('r'));
    // The holder stalls (its heartbeat cannot reach the table): simulated by expiring the row.
    await db.pool().query(`UPDATE ${schema}.runs SET lease_expires_at = now() - interval '1 second'`);
    const other = new PostgresStore({ pool: db.pool(), schema, leaseMs: 5_000, heartbeatMs: 1_000 });
    const releaseOther = await other.acquire('r', {});
    const refused = await slow.intent('r', modelIntent(0)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(refused, 'store_error'), String(refused)).toBe(true);
    const cause = (refused as Error & { cause?: unknown }).cause;
    expect(isPolyLoopError(cause, 'run_locked'), String(cause)).toBe(true);
    expect(String((cause as Error).message)).toContain('this writer lost its lease');
    await other.intent('r', modelIntent(0));
    expect((await other.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent']);
    // The stale release frees nothing: the run is still the other holder's.
    await releaseSlow();
    const third = await new PostgresStore({ pool: db.pool(), schema }).acquire('r', {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(third, 'run_locked')).toBe(true);
    await releaseOther();
  });

  it('refuses a write without a lease to a run another store holds', async () => {
    const schema = await db.freshSchema();
    const holder = new PostgresStore({ pool: db.pool(), schema });
    const release = await holder.acquire('r', {});
    const outsider = new PostgresStore({ pool: db.pool(), schema });
    const refused = await outsider.runStarted('r', started('r')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(refused, 'store_error')).toBe(true);
    expect(await holder.readLog('r')).toEqual([]);
    await release();
    await outsider.runStarted('r', started('r'));
  });

  it('keeps a held lease alive past leaseMs by its heartbeat', async () => {
    const schema = await db.freshSchema();
    // A renewal every 100 ms against a lease of 2 s: only a stall of nearly 2 s (which a loaded CI
    // machine can cause at 300 ms) loses it, and then rightly so.
    const lease = { leaseMs: 2_000, heartbeatMs: 100 } as const;
    const holder = new PostgresStore({ pool: db.pool(), schema, ...lease });
    const release = await holder.acquire('r', {});
    await sleep(2_500);
    const other = new PostgresStore({ pool: db.pool(), schema, ...lease });
    const refused = await other.acquire('r', {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(refused, 'run_locked'), String(refused)).toBe(true);
    await holder.step('r', stepWrite(0));
    await release();
    await (await other.acquire('r', {}))();
  });

  it('keeps a waiting acquire waiting, and then grants it, when the holder releases between its refused claim and its look at the holder after several rounds', async () => {
    const schema = await db.freshSchema();
    const holder = new PostgresStore({ pool: db.pool(), schema, leaseMs: 10_000 });
    const releaseHolder = await holder.acquire('r', {});
    let refusedClaims = 0;
    // The real pool, with one interleaving forced: the holder lets go right after the waiter's 4th refused claim.
    const pool = {
      query: async (q: PgQuery): Promise<PgResult> => {
        const r = await db
          .pool()
          .query({ text: q.text, values: [...(q.values ?? [])], ...(q.name ? { name: q.name } : {}) });
        if (q.name?.startsWith('polyloop-acquire') && r.rowCount === 0 && ++refusedClaims === 4) await releaseHolder();
        return r;
      },
      connect: () => db.pool().connect(),
    };
    const waiter = new PostgresStore({ pool, schema, lease: 'wait', leaseMs: 200, heartbeatMs: 20 });
    const got = await waiter.acquire('r', {}).then(
      (release) => release,
      (e: unknown) => e,
    );
    expect(typeof got, String(got)).toBe('function');
    expect(refusedClaims).toBe(4);
    await (got as () => Promise<void>)();
  });

  it('gives exactly one of many simultaneous acquirers the run', async () => {
    const schema = await db.freshSchema();
    const stores = Array.from({ length: 8 }, () => new PostgresStore({ pool: db.pool(), schema }));
    const outcomes = await Promise.allSettled(stores.map((s) => s.acquire('contended', {})));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect(isPolyLoopError(o.reason, 'run_locked')).toBe(true);
    for (const o of outcomes) if (o.status === 'fulfilled') await o.value();
  });
});

describe('PostgresStore lease within one store instance (its writes carry one token per run, so it must not hand a run to two drivers)', () => {
  const expire = (schema: string): Promise<unknown> =>
    db.pool().query(`UPDATE ${schema}.runs SET lease_expires_at = now() - interval '1 second'`);

  it('refuses a second driver of the same instance while the first still holds the run, even after the first lease expired in the database', async () => {
    const schema = await db.freshSchema();
    const store = new PostgresStore({ pool: db.pool(), schema, leaseMs: 10_000, heartbeatMs: 9_000 });
    const first = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    // The first driver stalls (its renewals cannot reach the table): its lease expires, nobody else takes it.
    await expire(schema);
    const second = await store.acquire('r', {}).then(
      async (release) => (await release(), null),
      (e: unknown) => e,
    );
    expect(isPolyLoopError(second, 'run_locked'), String(second)).toBe(true);
    // The first driver wakes up and goes on; nothing of a second driver is in between.
    await store.intent('r', modelIntent(0));
    await first();
    await (await store.acquire('r', {}))();
    expect((await store.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent']);
  });

  it("makes a waiting second driver of the same instance wait for the first one's release, not for its expiry in the database", async () => {
    const schema = await db.freshSchema();
    const store = new PostgresStore({ pool: db.pool(), schema, lease: 'wait', leaseMs: 10_000, heartbeatMs: 9_000 });
    const first = await store.acquire('r', {});
    await store.runStarted('r', started('r'));
    await expire(schema);
    let granted = false;
    const second = store.acquire('r', {}).then((release) => ((granted = true), release));
    await sleep(300);
    expect(granted).toBe(false);
    // Without the wait, this write of the first driver would land under the second driver's token.
    await store.intent('r', modelIntent(0));
    await first();
    const release = await second;
    await store.step('r', stepWrite(0));
    await release();
    expect((await store.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'intent', 'step']);
  });

  it('gives up a waiting second driver of the same instance with signal.reason when aborted', async () => {
    const store = await db.freshStore({ lease: 'wait' });
    const first = await store.acquire('r', {});
    const ac = new AbortController();
    const waiting = store.acquire('r', { signal: ac.signal }).then(
      () => null,
      (e: unknown) => e,
    );
    await sleep(50);
    const reason = new Error('stop waiting');
    ac.abort(reason);
    expect(await waiting).toBe(reason);
    await first();
    await (await store.acquire('r', {}))();
  });
});

describe('PostgresStore resultAndIntent', () => {
  it('writes a model result and its action intent as one statement: both, in order, or neither', async () => {
    const schema = await db.freshSchema();
    const store = new PostgresStore({ pool: db.pool(), schema });
    await store.runStarted('r', started('r'));
    const intent = actionIntent(0);
    if (intent.intent !== 'action') throw new Error('actionIntent builds an action intent');
    await store.resultAndIntent('r', modelResult(0), intent);
    await store.step('r', stepWrite(0));
    expect((await store.readLog('r')).map((r) => r.kind)).toEqual(['run_started', 'result', 'intent', 'step']);
    const seqs = await db.pool().query(`SELECT seq FROM ${schema}.records ORDER BY seq`);
    expect(seqs.rows.map((r) => r.seq)).toEqual([0, 1, 2, 3]);
    // Refused (another holder): neither record lands.
    const release = await new PostgresStore({ pool: db.pool(), schema }).acquire('r', {});
    await expect(store.resultAndIntent('r', modelResult(1), { ...intent, stepIndex: 1 })).rejects.toMatchObject({
      code: 'store_error',
    });
    expect(await store.readLog('r')).toHaveLength(4);
    await release();
  });
});

describe('PostgresStore tables', () => {
  it('holds each record as the lean line encodeLog writes, in write order, with its kind and readable run id, for other programs to query', async () => {
    const schema = await db.freshSchema();
    const store = new PostgresStore({ pool: db.pool(), schema });
    const written = await writeFullRun(store, 'run-7');
    const rows = await db
      .pool()
      .query(`SELECT seq, run_id, kind, record FROM ${schema}.records WHERE run_id = $1 ORDER BY seq`, ['run-7']);
    expect(rows.rows.map((r) => r.seq)).toEqual(written.map((_, i) => i));
    expect(rows.rows.map((r) => r.record)).toEqual(encodeLog(written).trimEnd().split('\n'));
    expect(rows.rows.map((r) => r.kind)).toEqual(written.map((r) => r.kind));
    const steps = await db
      .pool()
      .query(
        `SELECT (record::jsonb -> 'step' ->> 'stepIndex')::int AS i FROM ${schema}.records WHERE run_id = 'run-7' AND kind = 'step'`,
      );
    expect(steps.rows).toEqual([{ i: 0 }]);
  });

  it('keeps two run ids that differ only in a lone surrogate or a NUL apart', async () => {
    const store = await db.freshStore();
    const ids = ['a\uD800', 'a\uDBFF', 'a\u0000', 'a\uFFFD'];
    for (const [i, id] of ids.entries()) await store.runStarted(id, { ...started(id), snapshotHash: `h${i}` });
    for (const [i, id] of ids.entries())
      expect((await store.readLog(id)).map((r) => (r as { snapshotHash?: string }).snapshotHash)).toEqual([`h${i}`]);
  });

  it('migrate() is idempotent, safe to call concurrently, and refuses a database a newer library migrated', async () => {
    const schema = `mig_${process.pid}`;
    expect(
      await Promise.all([
        migrate(db.pool(), { schema }),
        migrate(db.pool(), { schema }),
        migrate(db.pool(), { schema }),
      ]),
    ).toEqual([SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION]);
    const versions = await db.pool().query(`SELECT version FROM ${schema}.schema_versions ORDER BY version`);
    expect(versions.rows).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })));
    await db.pool().query(`INSERT INTO ${schema}.schema_versions (version) VALUES (${SCHEMA_VERSION + 1})`);
    await expect(migrate(db.pool(), { schema })).rejects.toThrow(/newer than this library/);
    await expect(migrate(db.pool(), { schema: 'x"; DROP TABLE y; --' })).rejects.toThrow(TypeError);
  });

  it('rejects with StoreError naming the missing tables when migrate() was never run', async () => {
    const store = new PostgresStore({ pool: db.pool(), schema: 'never_migrated' });
    const e = await store.runStarted('r', started('r')).then(
      () => null,
      (x: unknown) => x,
    );
    expect(isPolyLoopError(e, 'store_error')).toBe(true);
    expect(String((e as Error).message)).toContain('never_migrated.runs');
    await expect(store.readLog('r')).rejects.toMatchObject({ code: 'store_error' });
  });
});
