/**
 * Another context of the same origin (a dedicated worker: its own thread, IndexedDB connection and
 * BroadcastChannel, as a second tab has) that asks a run to stop through `requestStop`. The test
 * posts `{ dbName, runId, reason? }` and gets back `'stopped'` or the error's message.
 */
import { requestStop } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';

type Ask = { readonly dbName: string; readonly runId: string; readonly reason?: string };

addEventListener('message', (event: MessageEvent<Ask>) => {
  const { dbName, runId, reason } = event.data;
  const store = new IndexedDBStore({ dbName });
  requestStop(store, runId, reason)
    .then(() => store.close())
    .then(
      () => postMessage('stopped'),
      (e: unknown) => postMessage(`failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`),
    );
});
