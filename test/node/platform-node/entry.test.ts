/** What `polyloop/node` offers: the store and its file naming; the CLI is a program, not an API. */
import { describe, expect, it } from 'vitest';
import * as node from '../../../src/platform-node/index.ts';

describe('polyloop/node', () => {
  it('exports FileStore and its file naming, and none of the CLI\'s internals', () => {
    expect(Object.keys(node).sort()).toEqual(['FileStore', 'MAX_REVERSIBLE_ID_BYTES', 'parseRunFileName', 'runIdFileName']);
  });
});
