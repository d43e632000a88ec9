/** `polyloop runs` / `show` on runs that wait for a person or carry a reply out, through the real launcher. */
import { beforeAll, describe, expect, it } from 'vitest';
import { RECORD_VERSION } from '../../../src/core/index.ts';
import type { ActionDecision, InputReply, InputRequestRecord, IntentRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { actionIntent, modelIntent, modelResult, started } from '../../contract/run-store.contract.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { polyloop as cli } from '../platform-node/helpers.ts';

const polyloop = (...args: string[]): ReturnType<typeof cli> => cli(args);
const v = RECORD_VERSION;
const at = '2026-01-01T00:00:01.000Z';

const noteDecision: ActionDecision = {
  kind: 'action',
  action: { kind: 'tool_call', name: 'note', arguments: { text: 'pay 40 EUR' } },
  trajectoryRepr: 'note(pay)',
  historyText: 'call note',
};
const askDecision: ActionDecision = {
  kind: 'action',
  action: { kind: 'tool_call', name: 'ask', arguments: { q: 'Which colour?' } },
  trajectoryRepr: 'ask',
  historyText: 'call ask',
};

function request(kind: 'approval' | 'answer' | 'settle', decision: ActionDecision | null): InputRequestRecord {
  return {
    kind: 'input_request',
    v,
    stepIndex: 0,
    resultId: kind === 'settle' ? 's0.settle' : 's0.input',
    request: { kind, target: decision ? 'action' : 'model_call', decision },
    requestedAt: at,
  };
}

const dirs = sharedTempDirs();
let dir = '';

beforeAll(async () => {
  dir = await dirs.make();
  const store = new FileStore({ dir, onWarning: () => undefined });
  const begin = async (runId: string, modelNever = false): Promise<void> => {
    await store.runStarted(runId, started(runId));
    await store.intent(
      runId,
      modelNever ? ({ ...modelIntent(0), replayPolicy: 'never' } as IntentRecord) : modelIntent(0),
    );
  };
  const reply = (r: InputReply): Parameters<FileStore['input']>[1] => ({
    kind: 'input',
    v,
    stepIndex: 0,
    resultId: r.resultId,
    reply: r,
    receivedAt: at,
  });
  const noteIntent = { ...actionIntent(0), decision: noteDecision } as IntentRecord;

  await begin('approving');
  await store.result('approving', 's0.model', modelResult(0));
  await store.inputRequest('approving', request('approval', noteDecision));

  await begin('answering');
  await store.result('answering', 's0.model', modelResult(0));
  await store.inputRequest('answering', request('answer', askDecision));

  await begin('settling');
  await store.result('settling', 's0.model', modelResult(0));
  await store.intent('settling', noteIntent);
  await store.inputRequest('settling', request('settle', noteDecision));

  await begin('settling-model', true);
  await store.inputRequest('settling-model', request('settle', null));

  await begin('approved');
  await store.result('approved', 's0.model', modelResult(0));
  await store.inputRequest('approved', request('approval', noteDecision));
  await store.input('approved', reply({ kind: 'approve', resultId: 's0.input' }));
});

describe.concurrent('polyloop runs with human input', () => {
  it('says what each awaiting run asks, about which action, under which resultId, and which replies it accepts', async () => {
    const r = await polyloop('runs', dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /approving\s+awaiting input at step 0: approval of note\(\{"text":"pay 40 EUR"\}\) \(s0\.input; replies approve, deny, cancel\)\s+0\s+0/,
    );
    expect(r.stdout).toMatch(
      /answering\s+awaiting input at step 0: an answer to ask\(\{"q":"Which colour\?"\}\) \(s0\.input; replies answer, deny, cancel\)/,
    );
    expect(r.stdout).toMatch(
      /settling\s+awaiting input at step 0: settle note\(\{"text":"pay 40 EUR"\}\) \(did it happen\?\) \(s0\.settle; replies executed, retry, deny, cancel\)/,
    );
    expect(r.stdout).toMatch(
      /settling-model\s+awaiting input at step 0: settle the model call \(was it made\?\) \(s0\.settle; replies retry, cancel\)/,
    );
  });

  it('says a reply that landed is carried out by resume', async () => {
    const r = await polyloop('runs', dir);
    expect(r.stdout).toMatch(
      /approved\s+in flight at step 0: action note\(\{"text":"pay 40 EUR"\}\) — a reply landed \(approve to s0\.input\): resume carries it out/,
    );
  });

  it('gives each row its pending request with --json: kind, target, action, resultId and accepted replies', async () => {
    const r = await polyloop('runs', dir, '--json');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{
      runId: string;
      state: string;
      pending: unknown;
      inFlight: { resolution: string } | null;
    }>;
    const by = new Map(rows.map((x) => [x.runId, x]));
    expect(by.get('approving')).toMatchObject({
      state: 'awaiting_input',
      inFlight: { resolution: 'await_input' },
      pending: {
        resultId: 's0.input',
        stepIndex: 0,
        kind: 'approval',
        target: 'action',
        action: noteDecision.action,
        decision: noteDecision,
        acceptedReplies: ['approve', 'deny', 'cancel'],
      },
    });
    expect(by.get('settling-model')?.pending).toEqual({
      resultId: 's0.settle',
      stepIndex: 0,
      kind: 'settle',
      target: 'model_call',
      decision: null,
      action: null,
      acceptedReplies: ['retry', 'cancel'],
    });
    expect(by.get('approved')).toMatchObject({
      state: 'in_flight',
      pending: null,
      inFlight: { resolution: 'apply_input', action: noteDecision.action },
    });
  });
});

describe.concurrent('polyloop show with human input', () => {
  it('shows the pending request: what is asked, the action, its arguments and the replies', async () => {
    const r = await polyloop('show', dir, 'approving');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('pending      approval at step 0 (s0.input)');
    expect(r.stdout).toContain('action       note');
    expect(r.stdout).toContain('arguments    {"text":"pay 40 EUR"}');
    expect(r.stdout).toContain('replies      approve, deny, cancel');
    expect(r.stdout).toContain('#0  awaiting approval of action note({"text":"pay 40 EUR"})  (s0.input)');
  });

  it('shows a settle request of a model call without an action', async () => {
    const r = await polyloop('show', dir, 'settling-model');
    expect(r.stdout).toContain('pending      settle at step 0 (s0.settle): the model call');
    expect(r.stdout).not.toContain('action       ');
    expect(r.stdout).toContain('replies      retry, cancel');
  });

  it('shows a landed reply as the last trajectory line, not yet carried out', async () => {
    const r = await polyloop('show', dir, 'approved');
    expect(r.stdout).not.toContain('pending ');
    expect(r.stdout).toContain(
      '#0  reply approve landed for action note({"text":"pay 40 EUR"})  (s0.input, not yet carried out)',
    );
  });

  it('includes pending in show --json', async () => {
    const r = await polyloop('show', dir, 'answering', '--json');
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({
      state: 'awaiting_input',
      pending: {
        kind: 'answer',
        resultId: 's0.input',
        action: askDecision.action,
        acceptedReplies: ['answer', 'deny', 'cancel'],
      },
      trajectory: [],
    });
  });
});
