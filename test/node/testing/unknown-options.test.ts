/** The test kit's functions refuse an option they do not know, naming it and the option it most likely meant. */
import { describe, it } from 'vitest';
import { InMemoryStore } from '../../../src/core/index.ts';
import {
  actionExecutorContract,
  collectingSink,
  crashAtEveryWrite,
  decisionInterpreterContract,
  eventSinkContract,
  faultyStore,
  jsonActionInterpreter,
  modelCallerContract,
  runStoreContract,
  scriptedModel,
} from '../../../src/testing/index.ts';
import { expectUnknownOption } from '../../contract/unknown-option.ts';

const never = (): never => {
  throw new Error('not called');
};

describe('test kit options', () => {
  it.each<[string, () => unknown, string, string]>([
    ['scriptedModel', () => scriptedModel([], { delay: 5 } as never), 'delay', 'delayMs'],
    ['collectingSink', () => collectingSink({ failOnly: [] } as never), 'failOnly', 'failOn'],
    [
      'faultyStore',
      () => faultyStore(new InMemoryStore(), { crashAfterWrites: 1, landBeforeThrow: true } as never),
      'landBeforeThrow',
      'landsBeforeThrow',
    ],
    ['crashAtEveryWrite', () => crashAtEveryWrite({ setup: never, replies: never } as never), 'replies', 'reply'],
    [
      'crashAtEveryWrite: upgrade',
      () => crashAtEveryWrite({ setup: never, upgrade: { setup: never, reasons: 'deploy', at: 'input' } } as never),
      'reasons',
      'reason',
    ],
    [
      'runStoreContract',
      () => runStoreContract({ name: 's', makeStore: never, leases: 'none' } as never),
      'leases',
      'lease',
    ],
    [
      'modelCallerContract',
      () => modelCallerContract({ name: 'm', makeModel: never, abortWithinMS: 1 } as never),
      'abortWithinMS',
      'abortWithinMs',
    ],
    [
      'decisionInterpreterContract',
      () => decisionInterpreterContract({ name: 'i', makeInterpreter: jsonActionInterpreter, reply: [] } as never),
      'reply',
      'replies',
    ],
    [
      'actionExecutorContract',
      () => actionExecutorContract({ name: 'e', makeExecutor: never, validAction: never, slowActions: never } as never),
      'slowActions',
      'slowAction',
    ],
    [
      'eventSinkContract',
      () => eventSinkContract({ name: 'e', makeSink: never, deliverWithin: 1 } as never),
      'deliverWithin',
      'deliverWithinMs',
    ],
  ])('%s', async (_fn, build, key, meant) => {
    await expectUnknownOption(build, key, meant);
  });
});
