/** Every options bag of the core entry refuses a key it does not know, naming it and the key it most likely meant. */
import { describe, expect, it } from 'vitest';
import {
  consoleSink,
  decodeLog,
  defineAgent,
  importRun,
  InMemoryStore,
  isPolyLoopError,
  resume,
  run,
  ToolRegistry,
} from '../../../src/core/index.ts';
import { checkOptionKeys } from '../../../src/core/internal-entry.ts';
import type { InvalidRequestError } from '../../../src/core/index.ts';
import { nearestKey } from '../../../src/core/options.ts';
import { harness, makeTools, SYNTHETIC } from './fixtures.ts';

/** The error `fn` throws or rejects with, which must be an `InvalidRequestError`. */
async function refusal(fn: () => unknown): Promise<InvalidRequestError> {
  try {
    await fn();
  } catch (e) {
    expect(isPolyLoopError(e, 'invalid_request'), String(e)).toBe(true);
    return e as InvalidRequestError;
  }
  throw new Error('nothing was refused');
}

describe('nearestKey', () => {
  it.each([
    ['needsAproval', ['needsApproval', 'handler'], 'needsApproval'],
    ['signl', ['signal', 'input'], 'signal'],
    ['maxStep', ['maxSteps', 'maxValidActions'], 'maxSteps'],
    ['runid', ['runId', 'budget'], 'runId'],
    ['strem', ['stream', 'settings'], 'stream'],
    ['dbname', ['dbName', 'lease'], 'dbName'],
    ['ttimeoutMs', ['timeoutMs', 'trust'], 'timeoutMs'],
    ['a', ['dir', 'onWarning'], null],
    ['parameters', ['name', 'schema'], null],
    ['temperature', ['model', 'body'], null],
  ])('%s → %s', (key, known, expected) => {
    expect(nearestKey(key, known)).toBe(expected);
  });
});

describe('checkOptionKeys', () => {
  const KNOWN = { url: true, signal: true } as const;

  it('accepts the known keys, each or none', () => {
    expect(() => checkOptionKeys({}, KNOWN, 'f')).not.toThrow();
    expect(() => checkOptionKeys({ url: 'x', signal: undefined }, KNOWN, 'f')).not.toThrow();
  });

  it('names every unknown key with its suggestion, or lists the known keys when none is near', async () => {
    const e = await refusal(() => checkOptionKeys({ urll: 'x', colour: 1 }, KNOWN, 'f'));
    expect(e.problems).toEqual([
      { path: 'urll', message: 'is not an option of f; did you mean `url`?' },
      { path: 'colour', message: 'is not an option of f; known: `url`, `signal`' },
    ]);
    expect(e.message).toContain('2 problems with the options of f');
  });

  it.each([
    ['null', null, 'got null'],
    ['an array', [], 'got an array'],
    ['a string', 'x', 'got a string'],
    ['undefined', undefined, 'got undefined'],
  ])('refuses %s as options', async (_label, value, got) => {
    expect((await refusal(() => checkOptionKeys(value, KNOWN, 'f'))).message).toBe(`f needs an options object, ${got}`);
  });
});

describe('the core bags', () => {
  const h = harness();
  const agentConfig = {
    model: h.agent.model,
    interpreter: h.agent.interpreter,
    store: h.agent.store,
    events: h.agent.events,
    syntheticObservations: SYNTHETIC,
  };

  it.each<[string, () => unknown, RegExp]>([
    [
      'defineAgent',
      () => defineAgent({ ...agentConfig, modle: h.agent.model } as never),
      /modle is not a field of the agent definition; did you mean `model`\?/,
    ],
    [
      'defineAgent syntheticObservations',
      () => defineAgent({ ...agentConfig, syntheticObservations: { ...SYNTHETIC, envErorr: 'x' } } as never),
      /syntheticObservations\.envErorr is not a field of syntheticObservations; did you mean `envError`\?/,
    ],
    [
      'a tool spec of ToolRegistry.of',
      () => ToolRegistry.of([{ ...makeTools()[0]!, needsAproval: true } as never]),
      /tool "add": needsAproval is not a field of a ToolSpec; did you mean `needsApproval`\?/,
    ],
    [
      'a tool spec without a name',
      () => ToolRegistry.of([{ nmae: 'x', description: 'd', parameters: {} } as never]),
      /a tool spec: nmae is not a field of a ToolSpec; did you mean `name`\?/,
    ],
    [
      'the run request',
      () => run(h.agent, { ...h.request, cancelGraceMS: 5 } as never),
      /request\.cancelGraceMS is not a field of the run request; did you mean `cancelGraceMs`\?/,
    ],
    [
      'request.budget',
      () => run(h.agent, { ...h.request, budget: { ...h.request.budget, maxTotalToken: 9 } } as never),
      /request\.budget\.maxTotalToken is not a field of request\.budget; did you mean `maxTotalTokens`\?/,
    ],
    [
      'request.context',
      () => run(h.agent, { ...h.request, context: { ...h.request.context, goals: [] } } as never),
      /request\.context\.goals is not a field of request\.context; did you mean `goal`\?/,
    ],
    [
      'an injection entry',
      () => run(h.agent, { ...h.request, injections: { skills: [{ name: 'n', txt: 't' }] } } as never),
      /request\.injections\.skills\[0\]\.txt is not a field of a skill entry; did you mean `text`\?/,
    ],
    [
      'run options',
      () => run(h.agent, h.request, { signl: AbortSignal.timeout(1000) } as never),
      /signl is not an option of run; did you mean `signal`\?/,
    ],
    [
      'run options given input',
      () => run(h.agent, h.request, { input: { kind: 'approve', resultId: 's0.input' } } as never),
      /input is not an option of run; it answers an open request: pass it to resume/,
    ],
    [
      'resume options',
      () => resume(h.agent, h.request, { inptu: { kind: 'approve', resultId: 's0.input' } } as never),
      /inptu is not an option of resume; did you mean `input`\?/,
    ],
    [
      'consoleSink',
      () => consoleSink({ maxChar: 10 } as never),
      /maxChar is not an option of consoleSink; did you mean `maxChars`\?/,
    ],
    [
      'importRun',
      () => importRun(new InMemoryStore(), 'r', '', { sigal: undefined } as never),
      /sigal is not an option of importRun; did you mean `signal`\?/,
    ],
    [
      'decodeLog',
      () => decodeLog('', { sorce: 'x' } as never),
      /sorce is not an option of decodeLog; did you mean `source`\?/,
    ],
  ])('%s', async (_bag, fn, message) => {
    expect((await refusal(fn)).message).toMatch(message);
  });

  it('names a misspelt request field beside the field it leaves missing', async () => {
    const { budget, ...rest } = h.request;
    const e = await refusal(() => run(h.agent, { ...rest, budgett: budget } as never));
    expect(e.problems.map((p) => p.path)).toEqual(['request.budgett', 'request.budget']);
  });

  it('refuses options that are not an object', async () => {
    expect((await refusal(() => run(h.agent, h.request, null as never))).message).toBe(
      'run needs an options object, got null',
    );
    expect((await refusal(() => consoleSink('loud' as never))).message).toBe(
      'consoleSink needs an options object, got a string',
    );
  });

  it('lets a definition be spread back into defineAgent (its params are recomputed)', () => {
    expect(() => defineAgent({ ...h.agent, model: h.agent.model })).not.toThrow();
  });

  it('writes nothing for a run whose options are refused', async () => {
    const store = new InMemoryStore();
    const fresh = harness({ store });
    await refusal(() => run(fresh.agent, fresh.request, { signall: undefined } as never));
    expect(await store.readLog(fresh.request.runId)).toEqual([]);
  });
});
