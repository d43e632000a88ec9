/** The Workers entry refuses an option it does not know, naming it and the option it most likely meant (in workerd). */
import { describe, expect, it } from 'vitest';
import { createApp, createRunObject, DurableObjectStore } from '../../src/platform-workers/index.ts';
import { logEventStream } from '../../src/platform-workers/sse.ts';
import type { DurableObjectSqlStorage } from '../../src/platform-workers/index.ts';
import type { LogFeed } from '../../src/platform-workers/sse.ts';
import { prepareRun } from '../../src/platform-workers/run-setup.ts';
import { jsonActionInterpreter, ToolRegistry } from '../../src/core/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { expectUnknownOption, refusalOf } from '../contract/unknown-option.ts';

const never = (): never => {
  throw new Error('not called');
};
/** Storage that fails the test if the store ever touches it. */
const untouched = { sql: { exec: never } } as unknown as DurableObjectSqlStorage;
const feed: LogFeed = { readLines: () => [], subscribe: () => () => undefined };

describe('Workers options (workerd)', () => {
  it.each<[string, () => unknown, string, string]>([
    ['createApp', () => createApp({ runs: never, tokens: never } as never), 'tokens', 'token'],
    ['createApp cors', () => createApp({ runs: never, cors: { origin: ['*'] } } as never), 'origin', 'origins'],
    [
      'createRunObject',
      () => createRunObject({ setup: never, resumeAfter: 1000 } as never),
      'resumeAfter',
      'resumeAfterMs',
    ],
    [
      'new DurableObjectStore',
      () => new DurableObjectStore(untouched, { maxRecordChar: 10 } as never),
      'maxRecordChar',
      'maxRecordChars',
    ],
    ['logEventStream', () => logEventStream(feed, -1, { keepAlive: 0 } as never), 'keepAlive', 'keepAliveMs'],
  ])('%s', async (_fn, build, key, meant) => {
    await expectUnknownOption(build, key, meant);
  });

  it('refuses options that are not an object', async () => {
    expect(await refusalOf(() => createRunObject(undefined as never))).toBe(
      'createRunObject needs an options object, got undefined',
    );
  });

  it('refuses a run whose setup returns a misspelt field (a second sink named evnets would never hear a thing)', async () => {
    const tools = ToolRegistry.of([]);
    const request = {
      budget: { maxSteps: 2, maxValidActions: 2, maxContextChars: 10_000 },
      executor: tools.executor(),
      tools,
      context: { run: [], goal: [] },
      injections: {},
      modelBinding: {},
      modelReplayPolicy: 'safe' as const,
      observationTemplate: '{observation}',
      toolRenderStyle: 'none' as const,
      cancelGraceMs: 100,
    };
    const seams = {
      model: scriptedModel([]),
      interpreter: jsonActionInterpreter(),
      syntheticObservations: { notExecuted: 'n', envError: 'e' },
      request,
    };
    const sink = { params: {}, deliver: () => undefined };
    const refused = await prepareRun(() => ({ ...seams, evnets: sink }) as never, { env: {}, runId: 'r', input: null });
    expect(refused).toMatchObject({ ok: false, code: 'bad_request' });
    expect(refused.ok === false && refused.message).toContain(
      'evnets is not an option of what setup returned; did you mean `events`?',
    );
    expect(await prepareRun(() => ({ ...seams, events: sink }), { env: {}, runId: 'r', input: null })).toMatchObject({
      ok: true,
    });
  });
});
