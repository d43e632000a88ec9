/**
 * The calls of a step with several, in flight, as the CLI and the viewer show them: each call's
 * resultId, action and where it stands — read from the step's records as `readRunLog` gathered
 * them (docs/design/step.md#several-calls-a-step), never judged a second way.
 * @module
 */
import type { Action, CallInFlight, CallsInFlight } from '../../core/index.ts';

/** One call of a step with several in flight, as `polyloop show --json` and the viewer's run JSON give it. */
export type CallInFlightSummary = {
  readonly resultId: string;
  readonly action: Action | null;
  /** The call's recorded representation (`send({"to":"ana"})`). */
  readonly repr: string;
  /**
   * Where it stands: `awaiting approval: s2.a1.input` (or answer, settle), `approve landed` (a reply
   * not yet carried out), its outcome once it landed (`executed`, `env_error`, …), `not executed`
   * (refused, or past the step's valid actions), `may have run` (a crash came while the calls ran),
   * `not run yet`.
   */
  readonly status: string;
};

/** Each call of a step with several in flight, in the provider's order. */
export function callsInFlight(f: CallsInFlight): CallInFlightSummary[] {
  return f.intent.calls.map((plan, j) => {
    const call = f.intent.decision.calls[j];
    const c = f.calls[j] as CallInFlight;
    const status = plan.skip !== null ? 'not executed' : callStatus(c, f.mayHaveRun);
    return { resultId: plan.resultId, action: call?.action ?? null, repr: call?.trajectoryRepr ?? '?', status };
  });
}

function callStatus(c: CallInFlight, mayHaveRun: boolean): string {
  if (c.result) return c.result.outcome.status;
  const asked = c.settle ?? c.gate;
  const answered = c.settle ? c.settleReply : c.gateReply;
  if (asked && answered) return `${answered.reply.kind} landed`;
  if (asked) return `awaiting ${asked.request.kind}: ${asked.resultId}`;
  return mayHaveRun ? 'may have run' : 'not run yet';
}

/** How many of the step's requests are open (asked, no reply yet). */
export function openCount(f: CallsInFlight): number {
  return f.calls.filter((c) => (c.gate !== null && c.gateReply === null) || (c.settle !== null && !c.settleReply))
    .length;
}
