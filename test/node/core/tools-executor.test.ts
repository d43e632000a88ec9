/**
 * RegistryExecutor: every outcome of a tool call, abort, tracked execution, and handlers that
 * break the contract (docs/api.md#tools).
 */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError, RegistryExecutor, ToolEnvironmentError, ToolRegistry } from '../../../src/core/index.ts';
import type { Action, ActionOutcome, ToolHandler, ToolSpec } from '../../../src/core/index.ts';
import { ADD_SCHEMA, call, ctx, spec } from './tools-fixtures.ts';

class QuotaExceededError extends Error {
  override readonly name = 'QuotaExceededError';
}
class NamelessSubclassError extends Error {}

/** A registry whose tools each exercise one row of the table. */
function tableRegistry(handled: string[] = []): ToolRegistry {
  return ToolRegistry.of([
    spec('add', async (args) => (handled.push('add'), String((args['a'] as number) + (args['b'] as number))), {
      parameters: ADD_SCHEMA,
    }),
    spec('env', async () => {
      handled.push('env');
      throw new ToolEnvironmentError('the sandbox is gone');
    }),
    spec('typed', async () => {
      handled.push('typed');
      throw new QuotaExceededError('quota of 3 calls used up');
    }),
    spec('range', async () => {
      handled.push('range');
      throw new RangeError('index 9 out of range');
    }),
    spec('stringly', async () => {
      handled.push('stringly');
      throw 'plain string failure';
    }),
    spec('nameless', async () => {
      handled.push('nameless');
      throw new NamelessSubclassError('a subclass that does not set name');
    }),
  ]);
}

type Row = {
  readonly label: string;
  readonly action: Action;
  readonly status: ActionOutcome['status'];
  readonly synthetic: boolean;
  readonly observation: string | RegExp;
};

const ROWS: readonly Row[] = [
  {
    label: 'a code action is not a tool call',
    action: { kind: 'code', source: 'print(1)' },
    status: 'not_executed',
    synthetic: true,
    observation: /not a tool call/,
  },
  {
    label: 'an unknown tool',
    action: call('nope', {}),
    status: 'not_executed',
    synthetic: true,
    observation: /unknown tool "nope".*known tools: add, env/,
  },
  {
    label: 'arguments that are not an object',
    action: call('add', [1, 2]),
    status: 'not_executed',
    synthetic: true,
    observation: /arguments of "add" must be a JSON object/,
  },
  {
    label: 'a missing required argument',
    action: call('add', { a: 1 }),
    status: 'not_executed',
    synthetic: true,
    observation: /"add" do not match its schema.*required property "b"/,
  },
  {
    label: 'an argument of the wrong type',
    action: call('add', { a: 1, b: 'two' }),
    status: 'not_executed',
    synthetic: true,
    observation: /#\/b: .*"integer"/,
  },
  {
    label: 'an argument the schema does not allow',
    action: call('add', { a: 1, b: 2, c: 3 }),
    status: 'not_executed',
    synthetic: true,
    observation: /"c" does not match additional properties/,
  },
  {
    label: 'a handler returning text',
    action: call('add', { a: 2, b: 5 }),
    status: 'executed',
    synthetic: false,
    observation: '7',
  },
  {
    label: 'a handler throwing ToolEnvironmentError',
    action: call('env', {}),
    status: 'env_error',
    synthetic: false,
    observation: 'the sandbox is gone',
  },
  {
    label: 'a handler throwing an Error subclass',
    action: call('typed', {}),
    status: 'executed',
    synthetic: false,
    observation: 'QuotaExceededError: quota of 3 calls used up',
  },
  {
    label: 'a handler throwing a built-in error',
    action: call('range', {}),
    status: 'executed',
    synthetic: false,
    observation: 'RangeError: index 9 out of range',
  },
  {
    label: 'a handler throwing a string',
    action: call('stringly', {}),
    status: 'executed',
    synthetic: false,
    observation: 'Error: plain string failure',
  },
];

describe('RegistryExecutor outcome table', () => {
  it.each(ROWS)('$label gives $status (synthetic: $synthetic)', async ({ action, status, synthetic, observation }) => {
    const out = await tableRegistry().executor().execute(action, ctx());
    expect(out.status).toBe(status);
    expect(out.observationIsSynthetic).toBe(synthetic);
    if (typeof observation === 'string') expect(out.observation).toBe(observation);
    else expect(out.observation).toMatch(observation);
    expect(out.envReportedCompletion).toBe(false);
    expect(out.observationTruncatedChars).toBe(0);
    expect(out.observation).not.toMatch(/\n\s+at /);
  });

  it('ends a schema refusal with one full stop, though the validator ends its own sentence', async () => {
    const out = await tableRegistry()
      .executor()
      .execute(call('add', { a: 1 }), ctx());
    expect(out.observation).toMatch(/required property "b"\.$/);
    expect(out.observation).not.toMatch(/\.\.$/);
  });

  it('reports several schema violations of one call in one sentence', async () => {
    const out = await tableRegistry()
      .executor()
      .execute(call('add', { a: 'x', b: 1.5, c: true }), ctx());
    expect(out.status).toBe('not_executed');
    expect(out.observation).toMatch(/^Not executed: arguments of "add" do not match its schema: /);
    expect(out.observation).toContain('#/a');
    expect(out.observation).toContain('#/b');
    expect(out.observation).toContain('"c"');
  });

  it('never calls the handler for an action it refuses', async () => {
    const handled: string[] = [];
    const ex = tableRegistry(handled).executor();
    for (const action of [call('add', { a: 1 }), call('nope', {}), { kind: 'code', source: 'x' } as const])
      await ex.execute(action, ctx());
    expect(handled).toEqual([]);
  });

  it('names the error class of a subclass that does not set its own name', async () => {
    // A throw is observed as "error class name: message"; a subclass that does not override `name`
    // still has a class name.
    const out = await tableRegistry().executor().execute(call('nameless', {}), ctx());
    expect(out.status).toBe('executed');
    expect(out.observation).toBe('NamelessSubclassError: a subclass that does not set name');
  });

  it('passes the validated arguments and the signal to the handler', async () => {
    const seen: unknown[] = [];
    const controller = new AbortController();
    const reg = ToolRegistry.of([
      spec('echo', async (args, { signal }) => (seen.push(args, signal), 'ok'), { parameters: ADD_SCHEMA }),
    ]);
    await reg.executor().execute(call('echo', { a: 1, b: 2 }), ctx(controller.signal));
    expect(seen).toEqual([{ a: 1, b: 2 }, controller.signal]);
  });
});

describe('RegistryExecutor and abort', () => {
  it('rejects with signal.reason untouched when aborted before the handler, and does not call it', async () => {
    const handled: string[] = [];
    const controller = new AbortController();
    const reason = { why: 'user pressed stop' };
    controller.abort(reason);
    await expect(
      tableRegistry(handled)
        .executor()
        .execute(call('add', { a: 1, b: 2 }), ctx(controller.signal)),
    ).rejects.toBe(reason);
    expect(handled).toEqual([]);
  });

  it('rejects with signal.reason untouched when aborted during a handler that honours the signal', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    const reg = ToolRegistry.of([
      spec(
        'slow',
        (_args, { signal }) =>
          new Promise<string>((_resolve, reject) =>
            signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
          ),
      ),
    ]);
    const pending = reg.executor().execute(call('slow', {}), ctx(controller.signal));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('rejects with signal.reason when aborted during a handler that ignores the signal and returns', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    const reg = ToolRegistry.of([spec('deaf', async () => (controller.abort(reason), 'finished anyway'))]);
    await expect(reg.executor().execute(call('deaf', {}), ctx(controller.signal))).rejects.toBe(reason);
  });

  it('rejects with signal.reason, not as env_error, when aborted during a handler that then throws ToolEnvironmentError', async () => {
    const controller = new AbortController();
    const reason = new Error('stop now');
    const reg = ToolRegistry.of([
      spec('envAfterAbort', async () => {
        controller.abort(reason);
        throw new ToolEnvironmentError('connection dropped');
      }),
    ]);
    await expect(reg.executor().execute(call('envAfterAbort', {}), ctx(controller.signal))).rejects.toBe(reason);
  });
});

describe('RegistryExecutor.executeTracked', () => {
  const completing = (behaviour: 'return' | 'throw' | 'env'): ToolSpec =>
    spec(
      'submit',
      async () => {
        if (behaviour === 'throw') throw new TypeError('bad submission');
        if (behaviour === 'env') throw new ToolEnvironmentError('grader offline');
        return 'submitted';
      },
      { completesRun: true },
    );

  it.each([
    {
      label: 'a completesRun tool that returned',
      tools: [completing('return')],
      action: call('submit', {}),
      completedRun: true,
      status: 'executed',
    },
    {
      label: 'a completesRun tool that threw an ordinary error',
      tools: [completing('throw')],
      action: call('submit', {}),
      completedRun: false,
      status: 'executed',
    },
    {
      label: 'a completesRun tool that threw ToolEnvironmentError',
      tools: [completing('env')],
      action: call('submit', {}),
      completedRun: false,
      status: 'env_error',
    },
    {
      label: 'a completesRun tool with bad arguments',
      tools: [{ ...completing('return'), parameters: ADD_SCHEMA }],
      action: call('submit', {}),
      completedRun: false,
      status: 'not_executed',
    },
    {
      label: 'an ordinary tool that returned',
      tools: [spec('plain', async () => 'ok')],
      action: call('plain', {}),
      completedRun: false,
      status: 'executed',
    },
    {
      label: 'a code action',
      tools: [completing('return')],
      action: { kind: 'code', source: 'submit()' } as Action,
      completedRun: false,
      status: 'not_executed',
    },
  ] as const)('completedRun is $completedRun for $label', async ({ tools, action, completedRun, status }) => {
    const tracked = await ToolRegistry.of(tools).executor().executeTracked(action, ctx());
    expect(tracked.completedRun).toBe(completedRun);
    expect(tracked.outcome.status).toBe(status);
    expect(tracked.outcome.envReportedCompletion).toBe(false);
  });
});

describe('RegistryExecutor built directly and handlers that break the contract', () => {
  it('refuses direct construction when a tool has no handler, as executor() does', () => {
    const reg = ToolRegistry.of([
      spec('ok', async () => ''),
      { name: 'bare', description: '', parameters: { type: 'object' } },
    ]);
    expect(() => new RegistryExecutor(reg, () => undefined)).toThrow(InvalidRequestError);
    expect(() => new RegistryExecutor(reg, () => undefined)).toThrow(/ok, bare/);
    expect(() => new RegistryExecutor(reg, (name) => (name === 'ok' ? async () => '' : undefined))).toThrow(
      /no handler for tool\(s\) bare/,
    );
  });

  it.each([
    { label: 'a registry that is not a ToolRegistry', args: [{ names: () => [] }, () => undefined] },
    { label: 'a handler lookup that is not a function', args: [ToolRegistry.of([]), undefined] },
  ])('refuses $label', ({ args }) => {
    expect(() => new RegistryExecutor(...(args as ConstructorParameters<typeof RegistryExecutor>))).toThrow(
      InvalidRequestError,
    );
  });

  it('runs the handlers it was given when built directly with all of them', async () => {
    const reg = ToolRegistry.of([{ name: 'bare', description: '', parameters: { type: 'object' } }]);
    const ex = new RegistryExecutor(reg, () => async () => 'from the lookup');
    expect(await ex.execute(call('bare', {}), ctx())).toMatchObject({
      status: 'executed',
      observation: 'from the lookup',
    });
  });

  it('keeps the handlers it found at construction, whatever the lookup answers later', async () => {
    let handler: ToolHandler | undefined = async () => 'first';
    const ex = new RegistryExecutor(
      ToolRegistry.of([{ name: 't', description: '', parameters: { type: 'object' } }]),
      () => handler,
    );
    handler = undefined;
    expect(await ex.execute(call('t', {}), ctx())).toMatchObject({ status: 'executed', observation: 'first' });
  });

  it.each([
    { label: 'an object', value: { text: 'hi' }, kind: 'an object' },
    { label: 'a number', value: 42, kind: 'a number' },
    { label: 'undefined', value: undefined, kind: 'undefined' },
    { label: 'null', value: null, kind: 'null' },
    { label: 'an array', value: ['a'], kind: 'an array' },
  ])(
    'a handler returning $label gives an executed outcome that says so, as if it had thrown a TypeError',
    async ({ value, kind }) => {
      const reg = ToolRegistry.of([spec('odd', (async () => value) as unknown as ToolHandler, { completesRun: true })]);
      const tracked = await reg.executor().executeTracked(call('odd', {}), ctx());
      expect(tracked.outcome).toEqual({
        status: 'executed',
        observation: `TypeError: handler of "odd" returned ${kind}, not a string`,
        observationIsSynthetic: false,
        envReportedCompletion: false,
        observationTruncatedChars: 0,
      });
      // A handler that broke its contract did not return normally: it completes nothing.
      expect(tracked.completedRun).toBe(false);
    },
  );

  it('a handler returning a non-string after abort rejects with signal.reason', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    const reg = ToolRegistry.of([spec('odd', (async () => (controller.abort(reason), 7)) as unknown as ToolHandler)]);
    await expect(reg.executor().execute(call('odd', {}), ctx(controller.signal))).rejects.toBe(reason);
  });
});
