/**
 * The {@link ActionExecutor} contract suite: an outcome of the right shape for every action —
 * one it runs, one it does not know, one it cannot read — never a throw; abort wins with
 * `signal.reason`; the action stays as it was.
 * @module
 */
import { checkOptionKeys, outcomeProblem } from '../../core/internal-entry.ts';
import type { Action, ActionExecutor, ActionOutcome, ExecuteContext } from '../../core/index.ts';
import type { OptionKeys } from '../../core/internal-entry.ts';
import { check, deepFreeze, equal, noProblem, paramsProblem, snapshot } from './check.ts';
import type { ContractCase, ContractSuite } from './check.ts';
import { rejectsWhenAbortedBefore, rejectsWhenAbortedDuring, valueWithin } from './seam-calls.ts';

/** Options of {@link actionExecutorContract}. */
export type ActionExecutorContractOptions = {
  /** Names the suite (`"ActionExecutor contract: <name>"`). */
  readonly name: string;
  /** Builds a fresh executor; called once per case. */
  readonly makeExecutor: () => ActionExecutor | Promise<ActionExecutor>;
  /** An action the executor runs: its outcome must be `executed`. */
  readonly validAction: Action;
  /** An action it does not know (default: a call of a tool no executor has): `not_executed`. */
  readonly unknownAction?: Action;
  /**
   * An action it cannot read (default: `validAction`'s tool with
   * arguments that are a string): any status, never a throw.
   */
  readonly malformedAction?: Action;
  /**
   * An action that runs until aborted (or longer than `abortWithinMs`); without it the mid-run abort case is left out.
   */
  readonly slowAction?: Action;
  /**
   * How soon execution must settle once aborted, and how long an outcome may take, in ms (defaults 2,000 and 30,000).
   */
  readonly abortWithinMs?: number;
  readonly outcomeWithinMs?: number;
};

const KNOWN: OptionKeys<ActionExecutorContractOptions> = {
  name: true,
  makeExecutor: true,
  validAction: true,
  unknownAction: true,
  malformedAction: true,
  slowAction: true,
  abortWithinMs: true,
  outcomeWithinMs: true,
};

/** Throws a violation naming the first way `outcome` breaks the `ActionOutcome` contract (the library's own check). */
function checkOutcome(outcome: unknown, what: string): asserts outcome is ActionOutcome {
  noProblem(outcomeProblem(outcome), `${what}: the outcome is malformed`);
}

function ctx(signal: AbortSignal, stepIndex = 0): ExecuteContext {
  return { runId: 'contract-run', stepIndex, resultId: `s${stepIndex}.action`, signal };
}

type Make = () => Promise<ActionExecutor>;
type Opts = { readonly abortMs: number; readonly outcomeMs: number };

async function outcomeOf(executor: ActionExecutor, action: Action, ms: number, what: string): Promise<ActionOutcome> {
  const outcome = await valueWithin(() => executor.execute(action, ctx(new AbortController().signal)), ms, {
    pending: () => `${what}: no outcome within ${ms} ms`,
    rejected: (e) => `${what} rejected with ${String(e)}; an executor resolves with an outcome for every action`,
  });
  checkOutcome(outcome, what);
  return outcome;
}

function shapeCases(
  make: Make,
  actions: { readonly valid: Action; readonly unknown: Action; readonly malformed: Action },
  o: Opts,
): ContractCase[] {
  return [
    {
      name: 'has params of flat scalar values and a replay policy of safe or never, where it has them',
      run: async () => {
        const executor = await make();
        if (executor.params !== undefined) noProblem(paramsProblem(executor.params), 'params');
        const policy = executor.replayPolicy;
        check(
          policy === undefined || policy === 'safe' || policy === 'never',
          `replayPolicy must be safe or never, got ${JSON.stringify(policy)}`,
        );
      },
    },
    {
      name: 'runs a valid action: an executed outcome of the right shape',
      run: async () => {
        const outcome = await outcomeOf(await make(), actions.valid, o.outcomeMs, 'execute(valid action)');
        equal(outcome.status, 'executed', 'status of the valid action');
      },
    },
    {
      name: 'resolves an unknown action with a not_executed outcome of the right shape, not a throw',
      run: async () => {
        const outcome = await outcomeOf(await make(), actions.unknown, o.outcomeMs, 'execute(unknown action)');
        equal(outcome.status, 'not_executed', 'status of the unknown action');
      },
    },
    {
      name: 'resolves a malformed action with an outcome of the right shape, not a throw',
      run: async () => {
        await outcomeOf(await make(), actions.malformed, o.outcomeMs, 'execute(malformed action)');
      },
    },
    {
      name: 'does not change the action it was given (frozen, and equal afterwards)',
      run: async () => {
        const executor = await make();
        for (const action of [actions.valid, actions.unknown, actions.malformed]) {
          const mine = snapshot(action);
          await outcomeOf(executor, mine, o.outcomeMs, 'execute()');
          equal(mine, action, 'the action after execute()');
          await outcomeOf(executor, deepFreeze(snapshot(action)), o.outcomeMs, 'execute(frozen action)');
        }
      },
    },
  ];
}

function abortCases(make: Make, valid: Action, slow: Action | undefined, o: Opts): ContractCase[] {
  const cases: ContractCase[] = [
    {
      name: 'rejects with signal.reason when called with an already aborted signal',
      run: async () => {
        const executor = await make();
        await rejectsWhenAbortedBefore({
          label: 'before execute',
          start: (signal) => executor.execute(valid, ctx(signal)),
          withinMs: o.abortMs,
          what: 'execute() with an aborted signal',
        });
      },
    },
  ];
  if (slow === undefined) return cases;
  cases.push({
    name: 'rejects with signal.reason, within the bound, when aborted during execution',
    run: async () => {
      const executor = await make();
      await rejectsWhenAbortedDuring({
        label: 'during execute',
        start: (signal) => executor.execute(slow, ctx(signal)),
        afterMs: 20,
        tooEarly: (kind) => `the slow action settled (${kind}) before the abort; slowAction must run until aborted`,
        withinMs: o.abortMs,
        what: 'execute() aborted mid-run',
      });
    },
  });
  return cases;
}

/**
 * The cases every {@link ActionExecutor} must pass, over actions you choose.
 *
 * @example
 * import { describe, it } from 'vitest';
 * import { actionExecutorContract } from 'polyloop/testing';
 * const suite = actionExecutorContract({
 *   name: 'my tools',
 *   makeExecutor: () => myTools.executor(),
 *   validAction: { kind: 'tool_call', name: 'add', arguments: { a: 1, b: 2 } },
 * });
 * describe(suite.name, () => { for (const c of suite.cases) it(c.name, c.run); });
 */
export function actionExecutorContract(options: ActionExecutorContractOptions): ContractSuite {
  checkOptionKeys(options, KNOWN, 'actionExecutorContract');
  const make: Make = async () => options.makeExecutor();
  const valid = options.validAction;
  const actions: { readonly valid: Action; readonly unknown: Action; readonly malformed: Action } = {
    valid,
    unknown: options.unknownAction ?? { kind: 'tool_call', name: 'polyloop_contract_no_such_tool', arguments: {} },
    malformed:
      options.malformedAction ??
      (valid.kind === 'tool_call'
        ? { kind: 'tool_call', name: valid.name, arguments: 'not a JSON object' }
        : { kind: 'code', source: '\u0000)(' }),
  };
  const o: Opts = { abortMs: options.abortWithinMs ?? 2000, outcomeMs: options.outcomeWithinMs ?? 30_000 };
  return {
    name: `ActionExecutor contract: ${options.name}`,
    cases: [...shapeCases(make, actions, o), ...abortCases(make, valid, options.slowAction, o)],
  };
}
