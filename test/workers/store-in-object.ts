/** A RunStore whose every call runs inside one Durable Object, on a DurableObjectStore over its storage (workerd tests). */
import { runInDurableObject } from 'cloudflare:test';
import type { RunStore } from '../../src/core/index.ts';
import { DurableObjectStore } from '../../src/platform-workers/durable-object-store.ts';

export function storeIn(stub: DurableObjectStub): RunStore {
  const inObject = <R>(fn: (s: DurableObjectStore) => R | Promise<R>): Promise<R> =>
    runInDurableObject(stub, (_instance, state) => fn(new DurableObjectStore(state.storage)));
  return {
    runStarted: (id, rec) => inObject((s) => s.runStarted(id, rec)),
    intent: (id, rec) => inObject((s) => s.intent(id, rec)),
    resultAndIntent: (id, result, intent) => inObject((s) => s.resultAndIntent(id, result, intent)),
    result: (id, rid, rec) => inObject((s) => s.result(id, rid, rec)),
    step: (id, rec) => inObject((s) => s.step(id, rec)),
    runEnded: (id, rec) => inObject((s) => s.runEnded(id, rec)),
    inputRequest: (id, rec) => inObject((s) => s.inputRequest(id, rec)),
    input: (id, rec) => inObject((s) => s.input(id, rec)),
    upgrade: (id, rec) => inObject((s) => s.upgrade(id, rec)),
    callResult: (id, rec) => inObject((s) => s.callResult(id, rec)),
    resumed: (id, rec) => inObject((s) => s.resumed(id, rec)),
    readLog: (id) => inObject((s) => s.readLog(id)),
  };
}
