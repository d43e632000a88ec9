import { ourSeamSuites } from '../../contract/seams.ts';
import { describeContract } from '../../contract/vitest-suite.ts';

for (const suite of ourSeamSuites()) describeContract(suite);
