/**
 * Edit on approval over HTTP in workerd (docs/human-input.md#edit-on-approval): `POST /runs/:id/input`
 * with an approval's edited `arguments` runs them; arguments the tool's schema refuses get a 400 that
 * names the problem, and nothing is written.
 */
import { describe, expect, it } from 'vitest';
import { call, startRun, waitFor } from './http.ts';
import type { Status } from './http.ts';

const reply = (runId: string, body: unknown): Promise<Response> =>
  call(`/runs/${runId}/input`, { method: 'POST', body: JSON.stringify(body) });

const awaiting =
  (resultId: string) =>
  (s: Status): boolean =>
    s.status === 'awaiting_input' && s.pending?.resultId === resultId;

async function logText(runId: string): Promise<string> {
  return (await call(`/runs/${runId}/log`)).text();
}

describe('edit on approval over POST /runs/:id/input (workerd)', () => {
  it('runs the edited arguments and keeps them in the input record', async () => {
    const runId = await startRun({ goal: 'one', approve: true });
    await waitFor(runId, awaiting('s0.input'));
    const res = await reply(runId, { kind: 'approve', resultId: 's0.input', arguments: { word: 'edited' } });
    expect(res.status).toBe(202);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(done.stopReason).toBe('final_answer');
    const { steps } = (await (await call(`/runs/${runId}/trajectory`)).json()) as {
      steps: { observation: string | null; actionRepr: string | null }[];
    };
    expect(steps[0]?.actionRepr).toContain('edited');
    expect(steps[0]?.observation).toMatch(
      /^A person changed the arguments of this call before it ran, to \{"word":"edited"\}\./,
    );
    expect(await logText(runId)).toContain('"arguments":{"word":"edited"}');
  });

  it('refuses edited arguments the schema refuses, and a misspelt arguments key, writing nothing', async () => {
    const runId = await startRun({ goal: 'one', approve: true });
    await waitFor(runId, awaiting('s0.input'));
    const before = await logText(runId);
    const bad = await reply(runId, { kind: 'approve', resultId: 's0.input', arguments: { word: 3, extra: true } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/word/);
    const typo = await reply(runId, { kind: 'approve', resultId: 's0.input', argumetns: { word: 'x' } });
    expect(typo.status).toBe(400);
    expect(await logText(runId)).toBe(before);
  });
});
