import { env } from 'cloudflare:workers';
import { runStoreContract } from '../contract/run-store.contract.ts';
import { storeIn } from './store-in-object.ts';

runStoreContract('DurableObjectStore', () => storeIn(env.RUNS.get(env.RUNS.newUniqueId())), {
  lease: 'none',
  largeObservationChars: 3 * 1024 * 1024,
});
