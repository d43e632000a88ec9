/**
 * PostgresStore's side of a person in control: a stop request kept in the run's row reaches the
 * driver holding the lease (in another process: another store instance on its own pool) however
 * long its heartbeat interval, and the next driver at its acquire when none ran; the lease's
 * `lost` signal aborts with `LeaseLostError` when a check, a renewal or a write finds another
 * holder, or when the process stalled past its lease; and a database of schema version 1 with
 * runs in it upgrades and keeps them.
 */
import { describe, expect, it } from 'vitest';
import { isPolyLoopError, readRunLog } from '../../../src/core/index.ts';
import type { ReleaseLease } from '../../../src/core/index.ts';
import { migrate, PostgresStore } from '../../../src/platform-postgres/index.ts';
import { modelIntent, started, stepWrite } from '../../contract/run-store.contract.ts';
import { usePostgres } from '../../postgres/fixture.ts';

const db = usePostgres();

/** The reason the signal aborted with, once it does (the test's timeout bounds the wait). */
function aborted(signal: AbortSignal | undefined): Promise<unknown> {
  if (!signal) return Promise.reject(new Error('the release carries no lost signal'));
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

/** A store as another process has it: its own pool. Default lease timing: a heartbeat every 10 s. */
const elsewhere = (schema: string, opts: { leaseMs?: number; heartbeatMs?: number } = {}): PostgresStore =>
  new PostgresStore({ pool: db.newPool(), schema, ...opts });

/** The stop request the lease's lost signal aborted with, if it did. */
const stopOf = (release: ReleaseLease): unknown => (release.lost?.reason as { stop?: unknown } | undefined)?.stop;

async function startedRun(store: PostgresStore, runId: string): Promise<ReleaseLease> {
  const release = await store.acquire(runId, {});
  await store.runStarted(runId, started(runId));
  return release;
}

describe('PostgresStore requestStop', () => {
  it("aborts the holder's lost signal with StopRequestedError and the reason when another process asks, with the default 10 s heartbeat", async () => {
    const schema = await db.freshSchema();
    const driver = new PostgresStore({ pool: db.pool(), schema });
    const release = await startedRun(driver, 'r');
    expect(release.lost?.aborted).toBe(false);
    await elsewhere(schema).requestStop('r', { reason: 'the customer cancelled' });
    const reason = await aborted(release.lost);
    expect(isPolyLoopError(reason, 'stop_requested'), String(reason)).toBe(true);
    expect((reason as { stop?: unknown }).stop).toEqual({ reason: 'the customer cancelled' });
    // A stop is not a lost lease: the driver may still write the run's end.
    await driver.intent('r', modelIntent(0));
    await release();
  });

  it('gives the next driver its lease with lost already aborted when the stop came while no driver ran', async () => {
    const schema = await db.freshSchema();
    const first = new PostgresStore({ pool: db.pool(), schema });
    await (await startedRun(first, 'r'))();
    await elsewhere(schema).requestStop('r', {});
    const release = await new PostgresStore({ pool: db.newPool(), schema }).acquire('r', {});
    expect(release.lost?.aborted).toBe(true);
    expect(isPolyLoopError(release.lost?.reason, 'stop_requested')).toBe(true);
    expect(stopOf(release)).toEqual({});
    await release();
  });

  it('aborts a driver of the same store instance at once', async () => {
    const store = await db.freshStore();
    const release = await startedRun(store, 'r');
    await store.requestStop('r', { reason: 'now' });
    expect(release.lost?.aborted).toBe(true);
    expect(stopOf(release)).toEqual({ reason: 'now' });
    await release();
  });

  it('is seen by a write of the holder (the stop column is read in the write statement)', async () => {
    const schema = await db.freshSchema();
    const driver = new PostgresStore({ pool: db.pool(), schema });
    const release = await startedRun(driver, 'r');
    // Written behind every check's back, so only the write can have told the driver.
    await db.pool().query(`UPDATE ${schema}.runs SET stop_request = '{"reason":"by hand"}'`);
    await driver.intent('r', modelIntent(0));
    expect(release.lost?.aborted).toBe(true);
    expect(stopOf(release)).toEqual({ reason: 'by hand' });
    await release();
  });

  it('keeps a reason with a lone surrogate, a NUL and quotes as it was given, and stores it for other programs to read', async () => {
    const schema = await db.freshSchema();
    const store = new PostgresStore({ pool: db.pool(), schema });
    await (await startedRun(store, 'r'))();
    const reason = 'a\uD800 b\u0000 "c" \\ d';
    await store.requestStop('r', { reason });
    const release = await store.acquire('r', {});
    expect(stopOf(release)).toEqual({ reason });
    await release();
    const row = await db.pool().query(`SELECT stop_request, stop_requested_at FROM ${schema}.runs`);
    expect(JSON.parse(row.rows[0].stop_request)).toEqual({ reason });
    expect(row.rows[0].stop_requested_at).toBeInstanceOf(Date);
  });

  it('rejects with RunNotFoundError for a run without a row, writing nothing', async () => {
    const schema = await db.freshSchema();
    const e = await new PostgresStore({ pool: db.pool(), schema }).requestStop('nobody', {}).then(
      () => null,
      (x: unknown) => x,
    );
    expect(isPolyLoopError(e, 'run_not_found'), String(e)).toBe(true);
    expect((await db.pool().query(`SELECT count(*)::int AS n FROM ${schema}.runs`)).rows[0].n).toBe(0);
  });
});

describe("PostgresStore lease's lost signal", () => {
  it('aborts with LeaseLostError once the check finds another driver took the run, with the default 10 s heartbeat', async () => {
    const schema = await db.freshSchema();
    const stalled = new PostgresStore({ pool: db.pool(), schema });
    const release = await startedRun(stalled, 'r');
    await db.pool().query(`UPDATE ${schema}.runs SET lease_expires_at = now() - interval '1 second'`);
    const releaseOther = await elsewhere(schema).acquire('r', {});
    const reason = await aborted(release.lost);
    expect(isPolyLoopError(reason, 'lease_lost'), String(reason)).toBe(true);
    await releaseOther();
    await release();
  });

  it('aborts with LeaseLostError when the heartbeat finds another holder', async () => {
    const schema = await db.freshSchema();
    const stalled = new PostgresStore({ pool: db.pool(), schema, leaseMs: 10_000, heartbeatMs: 50 });
    const release = await startedRun(stalled, 'r');
    // The lease expires; a heartbeat 50 ms apart may renew it before the other process asks, so
    // it asks again after the next expiry until it takes the run over.
    let releaseOther: ReleaseLease | null = null;
    for (let attempt = 0; releaseOther === null; attempt++) {
      await db.pool().query(`UPDATE ${schema}.runs SET lease_expires_at = now() - interval '1 second'`);
      releaseOther = await elsewhere(schema)
        .acquire('r', {})
        .catch((e: unknown) => {
          if (attempt >= 20 || !isPolyLoopError(e, 'run_locked')) throw e;
          return null;
        });
    }
    expect(isPolyLoopError(await aborted(release.lost), 'lease_lost')).toBe(true);
    await releaseOther();
    await release();
  });

  it('aborts with LeaseLostError before a refused write rejects', async () => {
    const schema = await db.freshSchema();
    const stalled = new PostgresStore({ pool: db.pool(), schema });
    const release = await startedRun(stalled, 'r');
    await db.pool().query(`UPDATE ${schema}.runs SET lease_expires_at = now() - interval '1 second'`);
    const releaseOther = await elsewhere(schema).acquire('r', {});
    const refused = await stalled.step('r', stepWrite(0)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(refused, 'store_error')).toBe(true);
    expect(release.lost?.aborted).toBe(true);
    expect(isPolyLoopError(release.lost?.reason, 'lease_lost')).toBe(true);
    expect(readRunLog(await stalled.readLog('r')).trajectory).toEqual([]);
    await releaseOther();
    await release();
  });

  it('aborts with LeaseLostError when the process stalled past its lease, before any timer of its own due later runs', async () => {
    const store = new PostgresStore({
      pool: db.pool(),
      schema: await db.freshSchema(),
      leaseMs: 300,
      heartbeatMs: 100,
    });
    const release = await startedRun(store, 'r');
    // A timer of the driver's (its handler's next move), due after the lease would have run out.
    let seenAtDriversTimer: boolean | null = null;
    const driversTimer = new Promise<void>((resolve) =>
      setTimeout(() => {
        seenAtDriversTimer = release.lost?.aborted ?? null;
        resolve();
      }, 350),
    );
    // The whole process stops (a long pause, SIGSTOP): no timer, no renewal, for longer than the lease.
    const until = performance.now() + 600;
    while (performance.now() < until);
    await driversTimer;
    expect(seenAtDriversTimer).toBe(true);
    expect(isPolyLoopError(release.lost?.reason, 'lease_lost')).toBe(true);
    await release();
  });

  it('is not aborted while the heartbeat keeps the lease and nobody asks for a stop', async () => {
    const store = new PostgresStore({
      pool: db.pool(),
      schema: await db.freshSchema(),
      // Past the lease by far, with room for a loaded machine's slow renewal.
      leaseMs: 2_000,
      heartbeatMs: 100,
    });
    const release = await startedRun(store, 'r');
    await new Promise((r) => setTimeout(r, 2_500));
    expect(release.lost?.aborted).toBe(false);
    await store.intent('r', modelIntent(0));
    await release();
  });
});

describe('PostgresStore schema version 2 on a database of version 1', () => {
  it('adds the stop columns in place: runs written before are read, driven and stopped as before', async () => {
    const schema = `v1_${process.pid}`;
    const s = `"${schema}"`;
    // The tables exactly as version 1 created them, with a run a version-1 store wrote and left.
    for (const text of [
      `CREATE SCHEMA ${s}`,
      `CREATE TABLE ${s}.schema_versions (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${s}.runs (run_key bytea PRIMARY KEY, run_id text NOT NULL, next_seq integer NOT NULL DEFAULT 0,
        lease_holder text, lease_owner text, lease_expires_at timestamptz, lease_epoch bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE ${s}.records (run_key bytea NOT NULL REFERENCES ${s}.runs (run_key), seq integer NOT NULL,
        run_id text NOT NULL, kind text NOT NULL, record text NOT NULL, written_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_key, seq))`,
      `CREATE INDEX runs_run_id ON ${s}.runs USING hash (run_id)`,
      `CREATE INDEX records_run_id ON ${s}.records USING hash (run_id)`,
      `INSERT INTO ${s}.schema_versions (version) VALUES (1)`,
    ])
      await db.pool().query(text);
    const key = `sha256(convert_to('"old"', 'UTF8'))`;
    await db
      .pool()
      .query(`INSERT INTO ${s}.runs (run_key, run_id, next_seq, lease_epoch) VALUES (${key}, 'old', 1, 3)`);
    const { encodeRecord } = await import('../../../src/core/index.ts');
    await db
      .pool()
      .query(
        `INSERT INTO ${s}.records (run_key, seq, run_id, kind, record) VALUES (${key}, 0, 'old', 'run_started', $1)`,
        [encodeRecord(started('old'))],
      );
    // Before the upgrade, the store says what to do instead of failing obscurely.
    const early = await new PostgresStore({ pool: db.pool(), schema }).requestStop('old', {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(String((early as Error & { cause?: Error }).cause?.message)).toContain('run migrate()');
    expect(await migrate(db.pool(), { schema })).toBe(2);
    const versions = await db.pool().query(`SELECT version FROM ${s}.schema_versions ORDER BY version`);
    expect(versions.rows).toEqual([{ version: 1 }, { version: 2 }]);
    const store = new PostgresStore({ pool: db.pool(), schema });
    expect((await store.readLog('old')).map((r) => r.kind)).toEqual(['run_started']);
    const release = await store.acquire('old', {});
    expect(release.lost?.aborted).toBe(false);
    await store.intent('old', modelIntent(0));
    await elsewhere(schema).requestStop('old', { reason: 'after the upgrade' });
    expect((await aborted(release.lost)) as object).toMatchObject({ code: 'stop_requested' });
    await release();
    expect((await store.readLog('old')).map((r) => r.kind)).toEqual(['run_started', 'intent']);
    const epoch = await db.pool().query(`SELECT lease_epoch FROM ${s}.runs`);
    expect(Number(epoch.rows[0].lease_epoch)).toBe(4);
  });
});
