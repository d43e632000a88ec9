/**
 * The crash law in real Chromium over IndexedDB, on the demo agent of examples/web: five weather
 * lookups (`safe`), a question the person answers (`ask_user`) and an email the person approves
 * (`send_email`, `never`). Crashed at every write point (the write lost, or landed but
 * unacknowledged) and resumed by a new store instance as a reloaded page would, answering each
 * request as the person would — a settle request from the outbox: `executed` when the email is
 * in it, `retry` when not — every case ends with the uninterrupted trajectory; the email went
 * exactly once, and at most the lookup in flight at the crash ran twice.
 */
import { describe, expect, it } from 'vitest';
import type { InputReply, InputRequest, RunStore } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { collectingSink, crashAtEveryWrite } from '../../src/testing/index.ts';
import { demoAgent, demoRequest } from '../../examples/web/agent.ts';
import type { Email } from '../../examples/web/agent.ts';
import { freshDbName } from './idb-store.cases.ts';

const PACE = { thinkMs: 0, toolMs: 0 };

/** The world outside one case: the lookups that ran and the emails that went. */
type World = { lookups: string[]; outbox: Email[] };

/** The person: answers the question, approves the email, and settles an email in doubt from the outbox. */
function person(world: () => World): (p: InputRequest) => InputReply {
  return (p) => {
    if (p.kind === 'answer') return { kind: 'answer', resultId: p.resultId, text: 'ana@example.com' };
    if (p.kind === 'approval') return { kind: 'approve', resultId: p.resultId };
    const sent = world().outbox.at(-1);
    return sent
      ? { kind: 'executed', resultId: p.resultId, observation: `Sent to ${sent.to}.` }
      : { kind: 'retry', resultId: p.resultId };
  };
}

describe('the web demo agent over IndexedDB in Chromium', () => {
  it('resumes from a crash at every one of its writes, answered by the person, to the uninterrupted trajectory; the email goes exactly once', async () => {
    const worlds: World[] = [];
    const stores: IndexedDBStore[] = [];
    const world = (): World => worlds.at(-1)!;
    const report = await crashAtEveryWrite({
      store: (): RunStore => {
        worlds.push({ lookups: [], outbox: [] });
        const store = new IndexedDBStore({ dbName: freshDbName('law') });
        stores.push(store);
        return store;
      },
      setup: (store) => ({
        agent: demoAgent(store, collectingSink(), PACE),
        request: demoRequest('r', PACE, {
          onLookup: (city) => world().lookups.push(city),
          sendEmail: (email) => void world().outbox.push(email),
        }),
      }),
      reply: person(world),
    });
    await Promise.all(stores.map((s) => s.close()));
    expect(report.failures).toEqual([]);
    const ref = report.reference;
    expect(ref.trajectory.map((s) => s.actionStatus)).toEqual([...Array<string>(7).fill('executed'), null]);
    expect(ref.finalAnswer).toBe('Cairo is the warmest at 31°C; the report went to ana@example.com.');
    // run_started, 8 × (model intent, step), 5 results landing with their action intent (resultAndIntent), 3 results alone
    // (the final answer, ask_user's step, the approval's step before its request), the approved action's intent alone,
    // 2 × (input_request, the mark of the resume that carries the reply out, input), run_ended.
    expect(report.writes).toBe(1 + 8 * 2 + 5 + 3 + 1 + 2 * 3 + 1);
    expect(report.cases).toHaveLength(report.writes * 2);
    const [baseline, ...crashed] = worlds;
    expect(baseline!.outbox).toHaveLength(1);
    crashed.forEach((w, i) => {
      const where = `case ${i}`;
      expect(w.outbox, where).toEqual(baseline!.outbox);
      const extra = [...w.lookups];
      for (const city of baseline!.lookups) {
        const at = extra.indexOf(city);
        expect(at, `${where}: the lookup for ${city} never ran`).not.toBe(-1);
        extra.splice(at, 1);
      }
      expect(extra.length, `${where}: repeated lookups ${JSON.stringify(extra)}`).toBeLessThanOrEqual(1);
    });
  }, 120_000);
});
