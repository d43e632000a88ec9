/**
 * IndexedDBStore in real Chromium: real IndexedDB, real Web Locks. The shared contract suite in
 * both lease modes, the IndexedDB cases, and what only a real browser can show.
 */
import { runStoreContract } from '../contract/run-store.contract.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { freshDbName, indexedDbStoreCases } from './idb-store.cases.ts';

runStoreContract('IndexedDBStore (Chromium, waiting lease)', () => new IndexedDBStore({ dbName: freshDbName('contract') }), { lease: 'waits' });
runStoreContract('IndexedDBStore (Chromium, refusing lease)', () => new IndexedDBStore({ dbName: freshDbName('contract'), lease: 'refuse' }), { lease: 'refuses' });
indexedDbStoreCases('Chromium');
