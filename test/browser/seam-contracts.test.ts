/**
 * The seams polyloop/testing and core ship, through their contract suites in Chromium: the suites
 * themselves use Web APIs only, and so must the seams they check.
 */
import { InMemoryStore } from '../../src/core/index.ts';
import { runStoreContract } from '../contract/run-store.contract.ts';
import { ourSeamSuites } from '../contract/seams.ts';
import { describeContract } from '../contract/vitest-suite.ts';

runStoreContract('InMemoryStore (Chromium)', () => new InMemoryStore(), { lease: 'refuses' });
for (const suite of ourSeamSuites()) describeContract(suite);
