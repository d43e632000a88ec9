/** The Workers status, trajectory and halted status are mappings of `readRunLog`'s view, nothing more. */
import { describe, expect, it } from 'vitest';
import { encodeRecord, readRunLog, resume, run } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import {
  haltedStatusOf,
  readablePrefixView,
  statusOf,
  trajectoryOf,
} from '../../../src/platform-workers/run-status.ts';
import { harness, makeTools } from '../core/fixtures.ts';

async function referenceLog(): Promise<readonly LogRecord[]> {
  const h = harness();
  await run(h.agent, h.request);
  return h.store.readLog('run-1');
}

describe('the Workers status of a run log', () => {
  it('agrees with readRunLog on every prefix of a real log: running until run_ended, then its outcome', async () => {
    const log = await referenceLog();
    const ended = log.at(-1);
    if (ended?.kind !== 'run_ended') throw new Error('the reference run did not end');
    for (let n = 0; n <= log.length; n++) {
      const view = readRunLog(log.slice(0, n));
      const status = statusOf('run-1', view);
      if (view.state === 'ended') {
        expect(status).toEqual({
          runId: 'run-1',
          status: 'ended',
          stopReason: ended.stopReason,
          finalAnswer: ended.finalAnswer,
          steps: ended.steps,
          validActions: ended.validActions,
          pending: null,
          openRequests: [],
          children: [],
          error: null,
        });
      } else {
        expect(status).toEqual({
          runId: 'run-1',
          status: 'running',
          stopReason: null,
          finalAnswer: null,
          steps: view.steps,
          validActions: view.validActions,
          pending: null,
          openRequests: [],
          children: [],
          error: null,
        });
      }
      expect(trajectoryOf('run-1', view)).toEqual({ runId: 'run-1', steps: view.trajectory });
    }
  });

  it('reports [run_started, intent, result] as running with no steps, as core reads it in flight', async () => {
    const log = await referenceLog();
    const view = readRunLog(log.slice(0, 3));
    expect(view.state).toBe('in_flight');
    expect(statusOf('run-1', view)).toMatchObject({ status: 'running', steps: 0, validActions: 0, stopReason: null });
  });

  it('gives a halted status the counters of the view and the reason, never an outcome', async () => {
    const view = readRunLog(await referenceLog());
    expect(haltedStatusOf('run-1', view, 'RunIdentityMismatchError: x')).toEqual({
      runId: 'run-1',
      status: 'halted',
      error: 'RunIdentityMismatchError: x',
      stopReason: null,
      finalAnswer: null,
      steps: view.steps,
      validActions: view.validActions,
      pending: null,
      openRequests: [],
      children: [],
    });
  });

  it('reports a run waiting for a person as awaiting_input with the open request, and the reply being carried out as running', async () => {
    const h = harness({ tools: makeTools().map((t) => (t.name === 'add' ? { ...t, needsApproval: true } : t)) });
    const paused = await run(h.agent, h.request);
    const view = readRunLog(await h.store.readLog('run-1'));
    expect(statusOf('run-1', view)).toEqual({
      runId: 'run-1',
      status: 'awaiting_input',
      stopReason: null,
      finalAnswer: null,
      steps: 0,
      validActions: 0,
      pending: paused.pending,
      openRequests: [paused.pending],
      children: [],
      error: null,
    });
    expect(paused.pending).toMatchObject({ kind: 'approval', resultId: 's0.input' });
    await resume(h.agent, h.request, { input: { kind: 'approve', resultId: 's0.input' } });
    const log = await h.store.readLog('run-1');
    const received = log.findIndex((r) => r.kind === 'input');
    expect(statusOf('run-1', readRunLog(log.slice(0, received + 1)))).toMatchObject({
      status: 'running',
      pending: null,
      openRequests: [],
    });
  });
});

describe('readablePrefixView', () => {
  it('reads up to the first line that does not decode', async () => {
    const log = await referenceLog();
    const lines = log.map((r) => encodeRecord(r));
    const spoiled = [...lines.slice(0, 5), '{"kind":"result"', ...lines.slice(6)];
    expect(readablePrefixView(spoiled)).toEqual(readRunLog(log.slice(0, 5)));
  });

  it('reads up to the record readRunLog refuses in a log that decodes but breaks the write protocol', async () => {
    const log = await referenceLog();
    const lines = log.map((r) => encodeRecord(r));
    // A second run_started after four records: readRunLog refuses the log at record 5.
    const view = readablePrefixView([...lines.slice(0, 4), lines[0] as string, ...lines.slice(4)]);
    expect(view).toEqual(readRunLog(log.slice(0, 4)));
    expect(readablePrefixView([...lines, lines[1] as string])).toEqual(readRunLog(log));
  });

  it('reads an empty log when even the first record is refused', () => {
    expect(readablePrefixView(['not json']).state).toBe('not_started');
  });
});
