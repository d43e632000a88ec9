/**
 * The channel between a sub-agent's tool and the loop (docs/design/sub-agents.md): a handler made
 * by `agentTool` is registered here with its runner, which tells the loop more than a handler's
 * string can — that the child paused (and on what), its run id, and the tokens it used. Imports
 * no module that runs a run, so `tools.ts` and `agent-tool.ts` can both use it without an import cycle.
 * @module
 */
import { isPolyLoopError } from './errors.ts';
import type { ChildRequest, InputReply, JsonObject, Usage } from './types.ts';

/** What the loop hands a sub-agent's runner besides the arguments. */
export type ChildContext = {
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly stepIndex: number;
  readonly resultId: string;
  /** A person's reply to the parent's request for this child, and what that request showed; or null. */
  readonly answer: ChildAnswer | null;
  /** The parent was resumed with an upgrade (a deploy): a child whose code changed goes on under it too. */
  readonly upgrade: { readonly reason: string } | null;
};

/** What the loop carries to a sub-agent's call besides its context: a person's reply, and a deploy's upgrade. */
export type ChildCall = Pick<ChildContext, 'answer' | 'upgrade'>;

/** A call with nothing to carry. */
export const NO_CHILD_CALL: ChildCall = Object.freeze({ answer: null, upgrade: null });

/** A reply the parent carries down: given to the parent's request, which showed `asked` (the child's request). */
export type ChildAnswer = { readonly reply: InputReply; readonly asked: ChildRequest };

/**
 * How a child run stood when its runner returned: ended (its observation and usage) or paused. An
 * ended call whose `runId` is null started no child run: its request function threw, or the child's
 * agent refused the request before writing anything; the observation says why.
 */
export type ChildOutcome =
  | { readonly kind: 'ended'; readonly runId: string | null; readonly observation: string; readonly usage: Usage }
  | { readonly kind: 'paused'; readonly child: ChildRequest; readonly usage: Usage };

/** Runs or resumes one child run, as `agentTool` built it. */
export type ChildRunner = (args: JsonObject, ctx: ChildContext) => Promise<ChildOutcome>;

const RUNNERS = new WeakMap<object, ChildRunner>();

/** Register `handler` as a sub-agent's: the loop then calls `runner` instead. */
export function registerChildRunner(handler: object, runner: ChildRunner): void {
  RUNNERS.set(handler, runner);
}

/** The runner behind a sub-agent's handler, or undefined for any other handler. */
export function childRunnerOf(handler: unknown): ChildRunner | undefined {
  return typeof handler === 'function' ? RUNNERS.get(handler) : undefined;
}

/**
 * A child run's id: its parent's run id and the parent's action resultId, so a replay of the
 * parent's call finds the same child (`order-7.s3.action`, `order-7.s3.a1`).
 */
export function childRunId(parentRunId: string, resultId: string): string {
  return `${parentRunId}.${resultId}`;
}

/**
 * Errors of a child that end its parent's run as they would end the child's: its store failed, its
 * log cannot be trusted or read, its definition changed, or another driver holds it. The parent's
 * log stays resumable; anything else a child throws is its call's observation.
 */
export function endsParent(e: unknown): boolean {
  return isPolyLoopError(e) && ENDS_PARENT.has(e.code);
}

const ENDS_PARENT: ReadonlySet<string> = new Set([
  'store_error',
  'corrupt_log',
  'schema_version',
  'run_identity_mismatch',
  'run_locked',
]);
