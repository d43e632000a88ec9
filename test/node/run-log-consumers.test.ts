/**
 * One table of logs through every consumer — core's `readRunLog`, the CLI's listing over a
 * FileStore directory, the Workers status, the IndexedDB store's run list — and they agree on the
 * state, the counters and the open request. The table is every prefix of a real run that mixes
 * steps, an approval, a never action and an answer (each reply carried out by a later driver, whose
 * `resumed` mark the log holds), plus a log that breaks the write protocol, which every consumer
 * must refuse.
 */
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { encodeRecord, importRun, type InMemoryStore, readRunLog, resume, run } from '../../src/core/index.ts';
import type { LogRecord, RunLogView } from '../../src/core/index.ts';
import { FileStore } from '../../src/platform-node/file-store.ts';
import { listRuns } from '../../src/cli/inspect.ts';
import { stateLine } from '../../src/cli/render.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { statusOf } from '../../src/platform-workers/run-status.ts';
import { tempDir } from '../support/temp-dir.ts';
import { harness, makeTools } from './core/fixtures.ts';

/** A run with an approved never action, an answer and a final answer: its whole log. */
async function referenceLog(): Promise<readonly LogRecord[]> {
  const tools = [
    ...makeTools().map((t) => (t.name === 'note' ? { ...t, needsApproval: true } : t)),
    { name: 'ask', description: 'Ask.', parameters: { type: 'object' }, answeredBy: 'human' as const },
  ];
  const h = harness({
    tools,
    script: [
      '{"tool":"add","args":{"a":1,"b":2}}',
      '{"tool":"note","args":{"text":"x"}}',
      '{"tool":"ask","args":{}}',
      '{"final":"done"}',
    ],
  });
  let result = await run(h.agent, h.request);
  while (result.pending) {
    const p = result.pending;
    result = await resume(h.agent, h.request, {
      input:
        p.kind === 'answer'
          ? { kind: 'answer', resultId: p.resultId, text: 'Yes.' }
          : { kind: 'approve', resultId: p.resultId },
    });
  }
  return (h.store as InMemoryStore).readLog('run-1');
}

type Reading = { state: string; steps: number; validActions: number; pending: string | null };
const fromView = (v: RunLogView): Reading => ({
  state: v.state,
  steps: v.steps,
  validActions: v.validActions,
  pending: v.pending?.resultId ?? null,
});
const ndjson = (records: readonly LogRecord[]): string => records.map((r) => `${encodeRecord(r)}\n`).join('');

describe('every consumer reads a log the same way', () => {
  it('core, the CLI listing, the Workers status and the IndexedDB run list agree on every prefix of a real log', async () => {
    const log = await referenceLog();
    // Every reply was carried out by a later driver: the marks are in the table, between the steps.
    expect(readRunLog(log).resumes.map((r) => r.resolution)).toEqual(['await_input', 'await_input']);
    const dir = await tempDir('polyloop-consumers-');
    const idb = new IndexedDBStore({ dbName: `consumers-${Date.now()}` });
    const states = new Set<string>();
    for (let n = 1; n <= log.length; n++) {
      const runId = `p${n}`;
      const prefix = log.slice(0, n).map((r) => (r.kind === 'run_started' ? { ...r, runId } : r));
      const core = fromView(readRunLog(prefix));
      states.add(`${core.state}${core.pending ? ':pending' : ''}`);
      await importRun(new FileStore({ dir }), runId, ndjson(prefix));
      await importRun(idb, runId, ndjson(prefix));

      const listing = (await listRuns(dir)).find((l) => l.runId === runId);
      expect(listing?.view, `CLI listing of prefix ${n}`).not.toBeNull();
      expect(fromView(listing!.view!), `CLI, prefix ${n}`).toEqual(core);
      expect(stateLine(listing!.view!, null).length, `CLI state line, prefix ${n}`).toBeGreaterThan(0);

      const status = statusOf(runId, readRunLog(prefix));
      const expectedStatus =
        core.state === 'ended' ? 'ended' : core.state === 'awaiting_input' ? 'awaiting_input' : 'running';
      expect(
        {
          status: status.status,
          steps: status.steps,
          validActions: status.validActions,
          pending: status.pending?.resultId ?? null,
        },
        `Workers, prefix ${n}`,
      ).toEqual({ status: expectedStatus, steps: core.steps, validActions: core.validActions, pending: core.pending });

      const listed = (await idb.listRuns()).find((r) => r.runId === runId);
      expect({ state: listed?.state, steps: listed?.steps, ended: listed?.ended }, `IndexedDB, prefix ${n}`).toEqual({
        state: core.state,
        steps: core.steps,
        ended: core.state === 'ended',
      });
    }
    // The table covers every state a live log can be in.
    expect([...states].sort()).toEqual(['at_boundary', 'awaiting_input:pending', 'ended', 'in_flight']);
  });

  it('every consumer refuses a log that breaks the write protocol (a step without its model-call intent)', async () => {
    const log = await referenceLog();
    const broken = [
      log[0] as LogRecord,
      ...log.slice(1).filter((r) => !(r.kind === 'intent' && r.intent === 'model_call' && r.stepIndex === 0)),
    ];
    expect(() => readRunLog(broken)).toThrow(/without its model-call intent/);
    const dir = await tempDir('polyloop-consumers-');
    // importRun refuses it too (nothing written), so write it through the store's own methods.
    const file = new FileStore({ dir });
    const idb = new IndexedDBStore({ dbName: `consumers-broken-${Date.now()}` });
    for (const store of [file, idb]) {
      for (const rec of broken) {
        if (rec.kind === 'run_started') await store.runStarted('run-1', rec);
        else if (rec.kind === 'intent') await store.intent('run-1', rec);
        else if (rec.kind === 'result') await store.result('run-1', rec.resultId, rec);
        else if (rec.kind === 'step') await store.step('run-1', rec);
        else if (rec.kind === 'input_request') await store.inputRequest('run-1', rec);
        else if (rec.kind === 'input') await store.input('run-1', rec);
        else if (rec.kind === 'upgrade') await store.upgrade?.('run-1', rec);
        else if (rec.kind === 'call_result') await store.callResult?.('run-1', rec);
        else if (rec.kind === 'resumed') await store.resumed?.('run-1', rec);
        else await store.runEnded('run-1', rec);
      }
    }
    const listing = (await listRuns(dir)).find((l) => l.runId === 'run-1');
    expect(listing).toMatchObject({ view: null, error: expect.stringMatching(/without its model-call intent/) });
    const listed = (await idb.listRuns()).find((r) => r.runId === 'run-1');
    expect(listed).toMatchObject({ state: null, error: expect.stringMatching(/without its model-call intent/) });
  });
});
