/** FileStore refuses an option it does not know, naming it and the option it most likely meant. */
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../src/platform-node/index.ts';
import { expectUnknownOption, refusalOf } from '../../contract/unknown-option.ts';

describe('FileStore options', () => {
  it('refuses a misspelt option', async () => {
    await expectUnknownOption(
      () => new FileStore({ dir: './runs', onWarn: () => undefined } as never),
      'onWarn',
      'onWarning',
    );
    await expectUnknownOption(() => new FileStore({ directory: './runs' } as never), 'directory', 'dir');
  });

  it('refuses options that are not an object', async () => {
    expect(await refusalOf(() => new FileStore('./runs' as never))).toBe(
      'new FileStore needs an options object, got a string',
    );
  });
});
