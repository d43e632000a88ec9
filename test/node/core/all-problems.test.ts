/**
 * All problems at once: a request or a definition with several problems is refused once, by one
 * InvalidRequestError that lists every problem with its path.
 */
import { describe, expect, it } from 'vitest';
import {
  CorruptLogError,
  defineAgent,
  InMemoryStore,
  InvalidInputError,
  InvalidRequestError,
  isPolyLoopError,
  RunExistsError,
  RunIdentityMismatchError,
  RunLockedError,
  RunNotFoundError,
  SchemaVersionError,
  StoreError,
  ToolEnvironmentError,
  validateRunRequest,
} from '../../../src/core/index.ts';
import type { AgentConfig, RunRequest } from '../../../src/core/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { harness } from './fixtures.ts';

function refusal(fn: () => unknown): InvalidRequestError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRequestError);
    return e as InvalidRequestError;
  }
  throw new Error('expected an InvalidRequestError, nothing was thrown');
}

describe('a request with several problems', () => {
  it('missing five fields reports all five with their paths in one error', () => {
    const { budget, injections, modelBinding, observationTemplate, cancelGraceMs: _c, ...rest } = harness().request;
    const { maxValidActions: _m, ...partialBudget } = budget;
    void injections;
    void modelBinding;
    void observationTemplate;
    const e = refusal(() => validateRunRequest({ ...rest, budget: partialBudget } as unknown as RunRequest));
    expect(e.problems.map((p) => p.path)).toEqual([
      'request.budget.maxValidActions',
      'request.injections',
      'request.modelBinding',
      'request.observationTemplate',
      'request.cancelGraceMs',
    ]);
    expect(e.problems[0]).toEqual({
      path: 'request.budget.maxValidActions',
      message: 'must be a positive integer, got undefined',
    });
    const lines = e.message.split('\n');
    expect(lines[0]).toBe('5 problems with the run request:');
    expect(lines.slice(1)).toEqual(e.problems.map((p) => `- ${p.path} ${p.message}`));
    expect(lines[1]).toBe('- request.budget.maxValidActions must be a positive integer, got undefined');
  });

  it('a single problem reads as one sentence, as before', () => {
    const e = refusal(() => validateRunRequest({ ...harness().request, toolRenderStyle: 'html' as never }));
    expect(e.message).toBe('request.toolRenderStyle must be "none", "json" or "markdown"');
    expect(e.problems).toEqual([{ path: 'request.toolRenderStyle', message: 'must be "none", "json" or "markdown"' }]);
  });

  it('names problems deep in the context, injections and binding together, each with its own path', () => {
    const h = harness();
    const request = {
      ...h.request,
      context: { run: [{ role: 'tool', content: [] }], goal: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] },
      injections: { skills: [{ name: 'a' }, 3] },
      modelBinding: { user: 1, org: 'x' },
    } as unknown as RunRequest;
    const e = refusal(() => validateRunRequest(request));
    expect(e.problems.map((p) => p.path)).toEqual([
      'request.context.run[0].role',
      'request.context.goal[0].content[0].text',
      'request.injections.skills[0].text',
      'request.injections.skills[1]',
      'request.modelBinding.user',
    ]);
    expect(e.problems[1]?.message).toBe('must be a string, got a number');
  });

  it('something that is not a request at all is one problem, not one per field', () => {
    const e = refusal(() => validateRunRequest(null as unknown as RunRequest));
    expect(e.problems).toEqual([{ path: 'request', message: 'must be an object' }]);
  });
});

describe('a definition with several problems', () => {
  const config = (): AgentConfig => ({
    model: scriptedModel(['{"final":"ok"}'], { model: 'm' }),
    interpreter: jsonActionInterpreter(),
    store: new InMemoryStore(),
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'Not run.', envError: 'Env broke.' },
  });

  it('reports every missing seam and every bad field in one error', () => {
    const { store: _s, ...rest } = config();
    const bad = {
      ...rest,
      events: { params: {} },
      syntheticObservations: { notExecuted: 1 },
    } as unknown as AgentConfig;
    const e = refusal(() => defineAgent(bad));
    expect(e.problems.map((p) => p.path)).toEqual([
      'store',
      'events.deliver',
      'syntheticObservations.notExecuted',
      'syntheticObservations.envError',
    ]);
    expect(e.message).toBe(
      [
        'defineAgent: 4 problems with the agent definition:',
        '- store is required',
        '- events.deliver must be a function',
        '- syntheticObservations.notExecuted must be a string, got a number',
        '- syntheticObservations.envError must be a string, got undefined',
      ].join('\n'),
    );
  });

  it('one problem reads as before', () => {
    const c = config();
    const e = refusal(() => defineAgent({ ...c, model: { ...c.model, call: undefined } } as unknown as AgentConfig));
    expect(e.message).toBe('defineAgent: model.call must be a function');
  });
});

describe('InvalidRequestError made from a message', () => {
  it('keeps the message and lists it as one problem without a path', () => {
    const e = new InvalidRequestError('importRun: the log is empty');
    expect(e.message).toBe('importRun: the log is empty');
    expect(e.problems).toEqual([{ path: '', message: 'importRun: the log is empty' }]);
    expect(Object.isFrozen(e.problems)).toBe(true);
  });
});

describe('isPolyLoopError knows every error class by its code', () => {
  it.each([
    new RunExistsError('r'),
    new RunNotFoundError('r'),
    new RunIdentityMismatchError('r', ['a']),
    new SchemaVersionError('9.0', 1),
    new StoreError('r', 'step', new Error('x')),
    new ToolEnvironmentError('x'),
    new InvalidRequestError('x'),
    new CorruptLogError(1, 'x'),
    new RunLockedError('r'),
    new InvalidInputError('r', 'x'),
  ])('$name', (e) => {
    expect(isPolyLoopError(e)).toBe(true);
    expect(isPolyLoopError(e, e.code)).toBe(true);
    expect(isPolyLoopError({ name: e.name, code: e.code, message: e.message })).toBe(true);
  });
});
