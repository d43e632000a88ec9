import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { isPolyLoopError } from '../../src/core/index.ts';
import type { StepWriteRecord } from '../../src/core/index.ts';
import { DurableObjectStore, RecordTooLargeError } from '../../src/platform-workers/durable-object-store.ts';
import type { StoredLine } from '../../src/platform-workers/durable-object-store.ts';
import { started, stepWrite } from '../contract/run-store.contract.ts';

const fresh = (): DurableObjectStub => env.RUNS.get(env.RUNS.newUniqueId());

describe('DurableObjectStore within Durable Object limits', () => {
  it('refuses a single SQLite value over 2 MB in workerd, which is why records are chunked', async () => {
    const err = await runInDurableObject(fresh(), (_o, state) => {
      state.storage.sql.exec('CREATE TABLE probe (b TEXT)');
      try {
        state.storage.sql.exec('INSERT INTO probe VALUES (?)', 'x'.repeat(3_000_000));
        return null;
      } catch (e) {
        return String(e);
      }
    });
    expect(err).toMatch(/TOOBIG|too big/i);
  });

  it('stores a 3 MB observation across several rows and returns it whole', async () => {
    const big = '0123456789'.repeat(300_000);
    const { rows, observation } = await runInDurableObject(fresh(), async (_o, state) => {
      const store = new DurableObjectStore(state.storage);
      await store.step('r', stepWrite(0, big));
      const count = state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM polyloop_log').one().n;
      const log = await store.readLog('r');
      return { rows: count, observation: (log[0] as StepWriteRecord).step.observation };
    });
    expect(rows).toBeGreaterThan(1);
    expect(observation).toBe(big);
  });

  it('writes a chunked record whole or not at all: a row failing mid-record leaves no part of it, and the next record takes its place', async () => {
    const big = 'y'.repeat(700_000); // three rows
    const out = await runInDurableObject(fresh(), async (_o, state) => {
      const store = new DurableObjectStore(state.storage);
      await store.runStarted('r', started('r'));
      state.storage.sql.exec(
        "CREATE TRIGGER fail_third_part BEFORE INSERT ON polyloop_log WHEN NEW.part = 2 BEGIN SELECT RAISE(ABORT, 'injected row failure'); END",
      );
      const error = await store.step('r', stepWrite(0, big)).then(
        () => null,
        (e: unknown) => String(e),
      );
      const rowsAfterFailure = state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM polyloop_log').one().n;
      state.storage.sql.exec('DROP TRIGGER fail_third_part');
      await store.step('r', stepWrite(0, big));
      return { error, rowsAfterFailure, lines: store.readLines('r').map((l) => l.seq), log: await store.readLog('r') };
    });
    expect(out.error).toMatch(/injected row failure/);
    expect(out.rowsAfterFailure).toBe(1);
    expect(out.lines).toEqual([0, 1]);
    expect((out.log[1] as StepWriteRecord).step.observation).toBe(big);
  });

  it('never splits a surrogate pair across rows', async () => {
    const text = '🚀'.repeat(400_000);
    const observation = await runInDurableObject(fresh(), async (_o, state) => {
      const store = new DurableObjectStore(state.storage);
      await store.step('r', stepWrite(0, text));
      return ((await store.readLog('r'))[0] as StepWriteRecord).step.observation;
    });
    expect(observation).toBe(text);
  });

  it('refuses a record over maxRecordChars with a clear error and writes nothing', async () => {
    const result = await runInDurableObject(fresh(), async (_o, state) => {
      const store = new DurableObjectStore(state.storage, { maxRecordChars: 10_000 });
      await store.runStarted('r', started('r'));
      const error = await store.step('r', stepWrite(0, 'y'.repeat(20_000))).then(
        () => null,
        (e: unknown) => e,
      );
      return {
        error,
        isTooLarge: error instanceof RecordTooLargeError,
        kinds: (await store.readLog('r')).map((x) => x.kind),
      };
    });
    expect(result.isTooLarge).toBe(true);
    expect(isPolyLoopError(result.error, 'store_error')).toBe(true);
    expect(String((result.error as Error).message)).toMatch(
      /exceeds DurableObjectStore's limit of 10000; nothing was written/,
    );
    expect(result.kinds).toEqual(['run_started']);
  });

  it('numbers records per run in write order and reports each append once', async () => {
    const result = await runInDurableObject(fresh(), async (_o, state) => {
      const seen: [string, StoredLine][] = [];
      const store = new DurableObjectStore(state.storage, { onAppend: (runId, e) => seen.push([runId, e]) });
      await store.runStarted('a', started('a'));
      await store.runStarted('b', started('b'));
      await store.step('a', stepWrite(0));
      return {
        seen: seen.map(([id, e]) => `${id}:${e.seq}`),
        after: store.readLines('a', 0).map((l) => l.seq),
        has: [store.hasLog('a'), store.hasLog('zzz')],
      };
    });
    expect(result.seen).toEqual(['a:0', 'b:0', 'a:1']);
    expect(result.after).toEqual([1]);
    expect(result.has).toEqual([true, false]);
  });
});
