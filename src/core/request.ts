/**
 * The definition and request types (SPEC §2). Their checks are in `request-checks.ts`, the
 * identity snapshot in `snapshot.ts`.
 * @module
 */
import type { ActionExecutor, DecisionInterpreter, EventSink, ModelCaller, RunStore } from './ports.ts';
import type { ToolRegistry } from './tools.ts';
import type { Budget, InputReply, Message, ReplayPolicy, SeamParams, SkillEntry, ToolRenderStyle } from './types.ts';

/** The text history shows in place of an observation the model must not depend on. */
export type SyntheticObservations = {
  /** For an action that was not executed (unknown tool, bad arguments, wrong action kind). */
  readonly notExecuted: string;
  /** For an action whose environment failed. */
  readonly envError: string;
};

/** What {@link defineAgent} takes. Every field is required; there is no default store. */
export type AgentConfig = {
  readonly model: ModelCaller;
  readonly interpreter: DecisionInterpreter;
  readonly store: RunStore;
  readonly events: EventSink;
  readonly syntheticObservations: SyntheticObservations;
};

/** `agent.params`: every seam's params plus the synthetic texts. */
export type AgentParams = {
  readonly model: SeamParams;
  readonly interpreter: SeamParams;
  readonly events: SeamParams;
  readonly syntheticObservations: SyntheticObservations;
};

/** A frozen, reusable agent definition. */
export type AgentDefinition = AgentConfig & { readonly params: AgentParams };

/** One run's request. Every field is required; none has a default. Cheap to build: no I/O, no hashing. */
export type RunRequest = {
  readonly runId: string;
  readonly budget: Budget;
  readonly executor: ActionExecutor;
  readonly tools: ToolRegistry;
  readonly context: { readonly run: readonly Message[]; readonly goal: readonly Message[] };
  readonly injections: Readonly<Record<string, readonly SkillEntry[]>>;
  readonly modelBinding: Readonly<Record<string, string>>;
  readonly modelReplayPolicy: ReplayPolicy;
  readonly observationTemplate: string;
  readonly toolRenderStyle: ToolRenderStyle;
  readonly cancelGraceMs: number;
};

/** Options of `run`. */
export type RunOptions = { readonly signal?: AbortSignal };

/** Options of `resume`: `input` answers the run's open input request (SPEC §9). */
export type ResumeOptions = RunOptions & { readonly input?: InputReply };
