/**
 * Standard synthetic observation texts, for a first agent that has no reason to word its own.
 * @module
 */
import type { SyntheticObservations } from './request.ts';

/**
 * Standard texts for {@link SyntheticObservations}: what the model reads in place of the
 * observation of an action that was not executed (unknown tool, arguments that do not match the
 * schema, a second tool call in one reply) or whose environment failed. They are part of the
 * agent's definition like any other field: pass them explicitly, or word your own.
 *
 * @example
 * const syntheticObservations = STANDARD_SYNTHETIC_OBSERVATIONS;
 * const agent = defineAgent({ model, interpreter, store, events, syntheticObservations });
 */
export const STANDARD_SYNTHETIC_OBSERVATIONS: SyntheticObservations = Object.freeze({
  notExecuted:
    'This action was not executed. Check the tool name and its arguments against the tools you were given, ' +
    'and make one tool call at a time.',
  envError:
    'This action failed in its environment, for a reason outside your control; it may not have taken effect. ' +
    'Try again, or go on another way.',
});
