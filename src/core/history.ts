/**
 * The messages a run hands its model: the prefix, then each completed step's turns, in one
 * append-only array (no copy per step, decision 0011), every message frozen. A model caller that
 * changes the array anyway changes nothing the run relies on: it is rebuilt from the trajectory.
 * @module
 */
import { messagesSize, stepHistory } from './internal/assembly.ts';
import { freezeDeep } from './seam-values.ts';
import type { SyntheticTexts } from './internal/assembly.ts';
import type { Message, StepRecord } from './types.ts';

/** One run's history: what the model is handed, and its size for the context limit. */
export class History {
  #messages: Message[];
  /** The frozen prefix (run context, tools, injections, goal): what a rebuilt history starts from. */
  readonly #prefix: readonly Message[];
  /** The first and last message put in the array: what a caller that changed it changed first. */
  #first: Message | undefined;
  #last: Message | undefined;
  #size = 0;
  readonly #template: string;
  readonly #synthetic: SyntheticTexts;

  /** `prefix` is copied and frozen: the model sees the request's messages, never its objects. */
  constructor(prefix: readonly Message[], template: string, synthetic: SyntheticTexts) {
    this.#prefix = freezeDeep(structuredClone(prefix) as Message[]);
    this.#messages = [...this.#prefix];
    this.#first = this.#prefix[0];
    this.#last = this.#prefix.at(-1);
    this.#template = template;
    this.#synthetic = synthetic;
  }

  /** The array to hand to the model; valid until the next `add`. */
  get messages(): readonly Message[] {
    return this.#messages;
  }

  /** Characters of history so far (the prefix not counted). */
  get size(): number {
    return this.#size;
  }

  /** Append the turns a completed step adds (incrementally). */
  add(step: StepRecord): void {
    const added = this.#turns(step);
    if (added.length === 0) return;
    this.#messages.push(...added);
    this.#first ??= added[0];
    this.#last = added.at(-1);
    this.#size += messagesSize(added);
  }

  /**
   * After a model call: if the caller changed the array's length or its ends (shifted the system
   * message out, emptied it, froze it, swapped the last message), rebuild it from the prefix and
   * `trajectory`, as a resume builds it.
   */
  keep(expectedLength: number, trajectory: readonly StepRecord[]): void {
    const m = this.#messages;
    if (
      m.length === expectedLength &&
      !Object.isFrozen(m) &&
      m[0] === this.#first &&
      m[expectedLength - 1] === this.#last
    )
      return;
    const rebuilt: Message[] = [...this.#prefix];
    for (const step of trajectory) rebuilt.push(...this.#turns(step));
    this.#messages = rebuilt;
    this.#first = rebuilt[0];
    this.#last = rebuilt.at(-1);
  }

  #turns(step: StepRecord): Message[] {
    return freezeMessages(stepHistory(step, this.#template, this.#synthetic));
  }
}

/**
 * Freeze history messages as `stepHistory` builds them: a message, its content
 * array, its blocks (all of a block only where it holds more than strings).
 */
function freezeMessages(messages: Message[]): Message[] {
  for (const m of messages) {
    for (const block of m.content) {
      if (block.type === 'text' || block.type === 'tool_result') Object.freeze(block);
      else freezeDeep(block);
    }
    Object.freeze(m.content);
    Object.freeze(m);
  }
  return messages;
}
