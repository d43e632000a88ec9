import { InMemoryStore } from '../../../src/core/index.ts';
import { runStoreContract } from '../../contract/run-store.contract.ts';

runStoreContract('InMemoryStore', () => new InMemoryStore(), { lease: 'refuses' });
