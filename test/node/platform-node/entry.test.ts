/** What `polyloop/node` offers: the store; its file naming and the CLI are not an API. */
import { describe, expect, it } from 'vitest';
import * as node from '../../../src/platform-node/index.ts';

describe('polyloop/node', () => {
  it("exports FileStore, and neither its file naming nor the CLI's internals", () => {
    expect(Object.keys(node).sort()).toEqual(['FileStore']);
  });
});
