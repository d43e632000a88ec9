/**
 * IndexedDBStore in real Chromium with several connections on one database: each run keeps its
 * write order, no record is lost to a sequence another connection took, and a schema upgrade by
 * another tab in the middle of a burst never loses a write the store reported as done.
 */
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { DB_VERSION, rowTexts } from '../../src/platform-web/schema.ts';
import type { LegacyRow, StoredRow } from '../../src/platform-web/schema.ts';
import { started, stepWrite } from '../contract/run-store.contract.ts';
import { freshDbName } from './idb-store.cases.ts';

// Steps are barriers: each is its own transaction (results alone would be held in memory, decision 0043).
const stepsOf = (log: readonly LogRecord[]): number[] =>
  log.flatMap((r) => (r.kind === 'step' ? [r.step.stepIndex] : []));

describe('IndexedDBStore with several connections on one database (Chromium)', () => {
  it('keeps each run in write order when two connections on one database write different runs at once', async () => {
    const dbName = freshDbName('two-conns');
    const a = new IndexedDBStore({ dbName });
    const b = new IndexedDBStore({ dbName });
    await Promise.all([a.runStarted('ra', started('ra')), b.runStarted('rb', started('rb'))]);
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 30; i++) {
      writes.push(a.step('ra', stepWrite(i)), b.step('rb', stepWrite(i)));
    }
    await Promise.all(writes);
    const expected = Array.from({ length: 30 }, (_, i) => i);
    expect(stepsOf(await b.readLog('ra'))).toEqual(expected);
    expect(stepsOf(await a.readLog('rb'))).toEqual(expected);
    expect((await a.listRuns()).map((r) => [r.runId, r.records])).toEqual([
      ['ra', 31],
      ['rb', 31],
    ]);
    await Promise.all([a.close(), b.close()]);
  });

  it('loses no record when two connections append to the same run at once (sequence taken inside the transaction)', async () => {
    const dbName = freshDbName('same-run');
    const a = new IndexedDBStore({ dbName });
    const b = new IndexedDBStore({ dbName });
    await a.runStarted('r', started('r'));
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).step('r', stepWrite(i))));
    expect(stepsOf(await a.readLog('r')).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    await Promise.all([a.close(), b.close()]);
  });

  it('never reports a write as done that an upgrade by another tab in the middle of a burst lost', async () => {
    const dbName = freshDbName('upgrade-mid-write');
    const store = new IndexedDBStore({ dbName, onWarning: () => undefined });
    await store.runStarted('r', started('r'));
    const writes = Array.from({ length: 20 }, (_, i) =>
      store.step('r', stepWrite(i)).then(
        () => i,
        () => -1,
      ),
    );
    const newer = await openDB(dbName, DB_VERSION + 1);
    const landed = (await Promise.all(writes)).filter((i) => i >= 0);
    const rows: (StoredRow | LegacyRow)[] = await newer.getAll('records');
    newer.close();
    const stored = rows.flatMap(rowTexts).flatMap((text) => {
      const rec = JSON.parse(text) as { kind: string; step?: { stepIndex: number } };
      return rec.kind === 'step' ? [rec.step?.stepIndex] : [];
    });
    for (const i of landed) expect(stored).toContain(i);
    expect(rows.map((row: { seq: number }) => row.seq)).toEqual(rows.map((_: unknown, i: number) => i));
  });
});
