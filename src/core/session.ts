/**
 * The one loop: `RunDriver` drives a run step by step from where its log stands. Writes follow
 * docs/design/step.md#writes-and-barriers (decision 0040: two barriers an action step), stops
 * docs/design/step.md#the-stop-decision, recovery docs/design/records-and-recovery.md#the-interrupted-step,
 * human input docs/design/human-input.md. `run.ts` reads the log and hands the driver what it found.
 *
 * The loop and the step are here: what a step does with the model's reply, its decision and its
 * action. Beside it: `session-seams.ts` calls the model, the interpreter and the executor and checks
 * what they return; `session-writes.ts` writes a step's records and the run's end in barrier order;
 * `session-input.ts` asks a person and writes the reply.
 * @module
 */
import type { Cancellation } from './cancellation.ts';
import { editedArguments } from './edits.ts';
import { NO_CHILD_CALL } from './child-runs.ts';
import { cancelWaitingChildren, stopRequestOf } from './control.ts';
import { assemblePrefix, messagesSize, toolsSize } from './internal/assembly.ts';
import { approvedDecision, childIndexOf } from './internal/step-calls.ts';
import { addUsage, countStep, NO_USAGE, stopAfterStep, stopBeforeModelCall } from './internal/stopping.ts';
import type { Counters } from './internal/stopping.ts';
import type { StoreWarning } from './ports.ts';
import type { AgentDefinition, RunRequest, UpgradeOptions } from './request.ts';
import type { Lease } from './lease.ts';
import { freezeDeep, plainOutcome } from './seam-values.ts';
import { decisionEvent, draftStep, now, setReply } from './step-record.ts';
import type { StepDraft } from './step-record.ts';
import { History } from './history.ts';
import { DELIVERED, Outbox } from './outbox.ts';
import { gateFor, refusalOf, replayPolicyOf, toolOf } from './action-policy.ts';
import { normalizeDecision, receiveCallReply, runCalls } from './session-calls.ts';
import { askForChild, askPerson, isChildRequestId, receiveReply } from './session-input.ts';
import type { Pause } from './session-input.ts';
import {
  childOfAction,
  executeAction,
  interpretReply,
  ModelSeam,
  startTool,
  toolFailed,
  toolRan,
} from './session-seams.ts';
import type { Executed } from './session-seams.ts';
import { RunWrites } from './session-writes.ts';
import { recordedDecision, startedEvent, startedRecord, takeoverMark } from './takeover.ts';
import type {
  ActionDecision,
  Decision,
  EndReason,
  InFlightStep,
  InputReply,
  JsonObject,
  ParamSnapshot,
  ReplayPolicy,
  RunEvent,
  RunLogView,
  RunResult,
  StepRecord,
  StoredRequest,
  UpgradeRecord,
} from './types.ts';

/** What a fresh run's run_started holds, and the snapshot's canonical text, which its hash is taken of. */
type Start = { readonly snapshot: ParamSnapshot; readonly snapshotText: string; readonly request: StoredRequest };

/** One run, driven from its log's state to its end or its next pause: the one loop. */
export class RunDriver {
  readonly #agent: AgentDefinition;
  readonly #req: RunRequest;
  readonly #signal: AbortSignal;
  readonly #cancel: Cancellation;
  readonly #runId: string;
  /** Prefix then the kept steps' turns, handed to the model as is (never copied per step), and the kept steps. */
  readonly #history: History;
  /** Characters of the prefix and the tool schemas: the part of the context that never grows. */
  readonly #fixedSize: number;
  #counters: Counters = { steps: 0, validActions: 0, usage: NO_USAGE };
  /** Records to the store, events to the sink. */
  readonly #out: Outbox;
  /** The records in barrier order: a step's held model result, its step record, the run's end. */
  readonly #writes: RunWrites;
  /** The model seam: each step's call, its deltas, its reply held for the step's next write. */
  readonly #model: ModelSeam;

  /** The run was resumed with an upgrade: its sub-agents' runs go on under theirs too. */
  readonly #childUpgrade: UpgradeOptions | null;

  constructor(
    agent: AgentDefinition,
    request: RunRequest,
    cancel: Cancellation,
    lease: Lease | null,
    childUpgrade: UpgradeOptions | null = null,
  ) {
    this.#childUpgrade = childUpgrade;
    this.#agent = agent;
    this.#req = request;
    this.#cancel = cancel;
    this.#signal = cancel.signal;
    this.#runId = request.runId;
    const tools = request.tools.modelSchemas();
    this.#out = new Outbox(agent.store, agent.events, request.runId, cancel);
    this.#writes = new RunWrites(this.#out, agent.store, request.runId, cancel.signal, lease);
    const prefix = assemblePrefix({
      runContext: request.context.run,
      tools,
      toolRenderStyle: request.toolRenderStyle,
      injections: request.injections,
      goalContext: request.context.goal,
    });
    const window = request.historyWindow?.steps ?? null;
    this.#history = new History(prefix, request.observationTemplate, agent.syntheticObservations, window);
    this.#fixedSize = messagesSize(prefix) + toolsSize(tools);
    const context = { tools, history: this.#history };
    this.#model = new ModelSeam(agent, request, cancel, this.#writes, context);
  }

  /** A write the grace period gave up on; it may still land. */
  get abandonedWrite(): Promise<unknown> | null {
    return this.#out.abandonedWrite;
  }

  /** Write the `upgrade` record (a barrier) before anything runs under the new identity. */
  upgrade(rec: UpgradeRecord): Promise<void> {
    return this.#out.write(rec);
  }

  /** From `view` to the run's end or next pause; entered apart, as a frame keeps its arguments (every step read). */
  drive(view: RunLogView, start: Start, warned: readonly StoreWarning[], input: InputReply | null): Promise<RunResult> {
    return this.#loop(this.#enter(view, start, warned, input));
  }

  /** Write run_started or take the log's counters and history over, announce the start: the interrupted step. */
  async #enter(view: RunLogView, start: Start, warned: readonly StoreWarning[], input: InputReply | null) {
    const runId = this.#runId;
    // The interrupted step, entered where it stopped; null for a fresh step.
    let inFlight: InFlightStep | null = view.inFlight;
    const fresh = view.state === 'not_started';
    // The first driver's sink may open a span for the run: its trace context lands in run_started.
    if (fresh) await this.#out.write(await startedRecord(runId, start, this.#traceparent));
    else {
      // The log's counters count every step; history keeps the steps the window keeps.
      this.#counters = { steps: view.steps, validActions: view.validActions, usage: view.usage };
      this.#history.resumeFrom(view.trajectory);
    }
    const fromStep = this.#counters.steps;
    // A later driver marks where it took over (docs/log-format.md), where the store can write the mark.
    if (!fresh && typeof this.#agent.store.resumed === 'function') {
      await this.#out.write(takeoverMark(inFlight, fromStep));
    }
    await this.#out.emit(startedEvent(view, runId, fromStep));
    for (const w of warned) await this.#out.emit({ type: 'warning', runId, code: w.code, message: w.message });
    if (input !== null && inFlight !== null) {
      const receive = inFlight.calls === null ? receiveReply : receiveCallReply;
      inFlight = await receive(this.#writes, inFlight, input);
    }
    return inFlight;
  }

  async #loop(entered: Promise<InFlightStep | null>): Promise<RunResult> {
    const { budget } = this.#req;
    const signal = this.#signal;
    try {
      let inFlight = await entered;
      const last = this.#history.lastStep;
      let reason: EndReason | null = null;
      if (inFlight === null) {
        reason = stopAfterStep({ cancelled: signal.aborted, step: last, counters: this.#counters, budget });
      }
      while (reason === null) {
        if (inFlight === null) {
          const contextSize = this.#fixedSize + this.#history.size;
          reason = stopBeforeModelCall({ cancelled: signal.aborted, contextSize, budget });
          if (reason !== null) break;
        }
        const step = await this.#step(this.#counters.steps, inFlight);
        if ('pause' in step) {
          if (step.pause === 'awaiting') return this.#writes.paused(step.pending, this.#counters, this.#history.steps);
          return await this.#end(step.pause);
        }
        this.#counters = countStep(this.#counters, step);
        this.#history.add(step);
        inFlight = null;
        reason = stopAfterStep({ cancelled: signal.aborted, step, counters: this.#counters, budget });
      }
      if (reason === 'cancelled') throw signal.reason;
      return await this.#end(reason);
    } catch (e) {
      // Abort wins, but nothing is written after a failed or abandoned write, nor after the end, nor
      // by a driver that lost its lease. A stop someone requested ends the run, which resolves.
      const out = this.#out;
      if (signal.aborted && !out.writeFailed && out.abandonedWrite === null && !this.#writes.ended) {
        const stop = stopRequestOf(signal.reason);
        if (stop) {
          // A sub-agent of the step that waits for a person hears the cancel first.
          await cancelWaitingChildren(this.#req, this.#agent.store);
          return await this.#writes.end('cancelled', this.#counters, this.#history.steps, stop);
        }
        if (!this.#cancel.leaseLost) await this.#end('cancelled').catch(() => undefined);
      }
      throw signal.aborted ? signal.reason : e;
    } finally {
      this.#out.close();
    }
  }

  /** The sink's trace context for this run's first driver, asked once, just before run_started is written. */
  readonly #traceparent = (): string | null => this.#out.traceparent();

  /**
   * One step, in the order of its writes: (1) model-call intent, (2) model result, interpretation,
   * (3) action intent, (4) action result and step record in one write — with a person asked
   * where the tool or a `never` operation in flight needs one. An interrupted step is entered where
   * it stopped, as `readRunLog` decided; `apply_input` carries out the reply that landed.
   */
  async #step(stepIndex: number, inFlight: InFlightStep | null): Promise<StepRecord | Pause> {
    const runId = this.#runId;
    const step = draftStep(stepIndex, now());
    const started = this.#out.emit({ type: 'step_started', runId, stepIndex });
    if (started !== DELIVERED) await started;
    const reply = inFlight?.resolution === 'apply_input' ? (inFlight.input?.reply ?? null) : null;
    // A cancel of a sub-agent's request reaches the child first (the step carries it there); in a step
    // with several calls every cancel does, to every child of the step still out.
    if (reply?.kind === 'cancel' && !inFlight?.calls && !isChildRequestId(reply.resultId))
      return { pause: 'cancelled' };
    if (inFlight?.resolution === 'settle') {
      return askPerson(this.#writes, stepIndex, 'settle', inFlight.target, inFlight.actionIntent?.decision ?? null);
    }
    // 1–2: call the model (again, same resultId, for `reissue_model` or a settled retry), or use the stored reply.
    const retryModel = reply?.kind === 'retry' && inFlight?.request?.request.target === 'model_call';
    const called = inFlight?.result
      ? { reply: freezeDeep(inFlight.result.reply) }
      : await this.#model.call(stepIndex, inFlight === null || retryModel, inFlight !== null);
    if ('failure' in called) {
      step.observation = called.failure;
      return this.#writes.finishStep(step, null);
    }
    const r = called.reply;
    setReply(step, r);
    // The decision: the one recorded (action intent or input request; never re-interpreted), or a fresh one.
    let decision: Decision;
    const recorded = recordedDecision(inFlight);
    if (recorded) {
      decision = freezeDeep(recorded);
    } else {
      const parallel = this.#req.parallelToolCalls ?? 1;
      const interpreted = interpretReply(this.#agent.interpreter, r, this.#req.tools, parallel);
      if ('failure' in interpreted) {
        const summary = interpreted.failure;
        const event: RunEvent = { type: 'decision', runId, stepIndex, decision: 'interpreter_error', summary };
        await this.#writes.emitAfterResult(event);
        step.decision = 'interpreter_error';
        step.observation = interpreted.failure;
        return this.#writes.finishStep(step, null);
      }
      decision = normalizeDecision(interpreted.decision, parallel);
      const told = this.#writes.emitAfterResult(decisionEvent(runId, stepIndex, decision));
      if (told !== DELIVERED) await told;
    }
    step.historyText = decision.historyText;
    step.historyContent = decision.historyContent ?? null;
    if (decision.kind === 'final') {
      step.decision = 'final';
      step.finalAnswer = decision.answer;
      return this.#writes.finishStep(step, null);
    }
    if (decision.kind === 'invalid') {
      step.decision = 'invalid';
      step.explanation = decision.explanation;
      return this.#writes.finishStep(step, null);
    }
    // No new side effect after an abort, even if the model ignored the signal and replied.
    if (this.#signal.aborted) {
      if (this.#writes.holding) await this.#writes.land(null);
      this.#signal.throwIfAborted();
    }
    if (decision.kind === 'actions') {
      const run = {
        req: this.#req,
        writes: this.#writes,
        cancel: this.#cancel,
        counters: this.#counters,
        childUpgrade: this.#childUpgrade,
      };
      return runCalls(run, step, decision, inFlight);
    }
    return this.#act(step, decision, inFlight, reply);
  }

  /**
   * The action half of a step: the gate (a person approves or answers), (3) the action intent,
   * (4) execution — or what a settlement says happened.
   */
  async #act(
    step: StepDraft,
    proposed: ActionDecision,
    inFlight: InFlightStep | null,
    reply: InputReply | null,
  ): Promise<StepRecord | Pause> {
    const { stepIndex } = step;
    const resultId = this.#writes.actionResultId(stepIndex);
    // What runs is what the person approved: the arguments they edited, if they did.
    const decision = approvedDecision(proposed, inFlight?.actionIntent ? null : (inFlight?.approval ?? null));
    const edit = editedArguments(inFlight?.approval?.reply);
    const refusal = refusalOf(this.#req, decision);
    step.decision = 'action';
    step.actionRepr = decision.trajectoryRepr;
    step.toolCallId = decision.action.kind === 'tool_call' ? (decision.action.id ?? null) : null;
    let replayed = inFlight?.resolution === 'replay_action';
    let replayPolicy: ReplayPolicy = inFlight?.actionIntent?.replayPolicy ?? 'safe';
    // A reply to a sub-agent's request goes to its child (with the child's own resultId).
    const asked = inFlight?.request?.request.child ?? null;
    const childAnswer = reply && asked ? { reply, asked } : null;
    if (childAnswer) replayed = true;
    else if (!inFlight?.actionIntent) {
      // A reply to this step's gate holds as recorded, whatever an executor's hook says now.
      const answer = inFlight?.approval?.reply ?? null;
      if (answer === null) {
        const gate = refusal === null ? gateFor(this.#req, decision) : null;
        if (gate) return askPerson(this.#writes, stepIndex, gate, 'action', decision);
      } else if (answer.kind === 'deny') return this.#writes.denied(step, answer.reason);
      else if (answer.kind === 'answer') return this.#byPerson(step, decision, answer.text);
      // 3: the action intent, a barrier.
      replayPolicy = refusal === null ? replayPolicyOf(this.#req, decision) : 'safe';
      await this.#writes.actionIntent(stepIndex, decision, replayPolicy);
    } else if (reply) {
      // A settlement of the action in flight: what the person says happened is recorded, not run again.
      // It ran with the person's arguments: its observation says so, as when it is carried out here.
      if (reply.kind === 'executed') return this.#byPerson(step, decision, reply.observation, edit);
      if (reply.kind === 'deny') return this.#writes.denied(step, reply.reason);
      await this.#writes.actionIntent(stepIndex, decision, inFlight.actionIntent.replayPolicy);
      replayed = true;
    }
    const { action } = decision;
    const runId = this.#runId;
    const childRunId = refusal === null ? childOfAction(this.#req, decision, resultId) : null;
    const started = this.#out.emit(
      childRunId === null
        ? { type: 'action_started', runId, stepIndex, resultId, action, replayed, replayPolicy }
        : { type: 'action_started', runId, stepIndex, resultId, action, replayed, replayPolicy, childRunId },
    );
    if (started !== DELIVERED) await started;
    // 4: execute; the action result and the step record land as one write.
    const call =
      childAnswer || this.#childUpgrade ? { answer: childAnswer, upgrade: this.#childUpgrade } : NO_CHILD_CALL;
    // A registry's own tool (every step's) is awaited here: `executeAction`'s async layer costs a step.
    const tool = refusal === null ? startTool(this.#req, this.#cancel, decision, stepIndex, resultId) : null;
    let executed: Executed;
    try {
      executed =
        refusal ??
        (tool
          ? toolRan(await tool)
          : await executeAction(this.#req, this.#cancel, decision, stepIndex, resultId, call));
    } catch (e) {
      if (tool === null) throw e;
      executed = toolFailed(this.#signal, e);
    }
    if (childAnswer?.reply.kind === 'cancel') return { pause: 'cancelled' };
    if (executed.child?.kind === 'paused') {
      const last = inFlight?.request?.request.kind === 'child' ? inFlight.request : null;
      const id = `s${stepIndex}.c${childIndexOf(last) + 1}`;
      const { pending } = await askForChild(this.#writes, stepIndex, id, decision, executed.child.child);
      await this.#writes.pause();
      return { pause: 'awaiting', pending };
    }
    const { outcome, completedRun } = executed;
    // The child as it ran: none when its request was refused before it started.
    const ran = executed.child?.kind === 'ended' ? executed.child.runId : null;
    const finished = this.#out.emit(
      ran === null
        ? { type: 'action_finished', runId, stepIndex, resultId, outcome }
        : { type: 'action_finished', runId, stepIndex, resultId, outcome, childRunId: ran },
    );
    if (finished !== DELIVERED) await finished;
    if (executed.child) {
      if (ran !== null) step.childRunId = ran;
      step.usage = addUsage(step.usage ?? NO_USAGE, executed.child.usage);
    }
    return this.#writes.finishAction(step, outcome, completedRun, edit);
  }

  /** Finish a step with what a person says the action gave (an answer, or a settlement): nothing ran here. */
  #byPerson(
    step: StepDraft,
    decision: ActionDecision,
    observation: string,
    edit: JsonObject | null = null,
  ): Promise<StepRecord> {
    const completedRun = toolOf(this.#req, decision)?.completesRun === true;
    return this.#writes.finishAction(step, plainOutcome('executed', observation), completedRun, edit);
  }

  #end(stopReason: EndReason): Promise<RunResult> {
    return this.#writes.end(stopReason, this.#counters, this.#history.steps);
  }
}
