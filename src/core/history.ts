/**
 * The messages a run hands its model: the prefix, then each kept step's turns, in one array (no
 * copy per step, decision 0011), every message frozen. A model caller that changes the array
 * anyway changes nothing the run relies on: it is rebuilt from the kept steps. With a history
 * window (decision 0084) only the last steps are kept, in the array and in memory.
 * @module
 */
import { messagesSize, stepHistory } from './internal/assembly.ts';
import { freezeDeep } from './seam-values.ts';
import type { SyntheticTexts } from './internal/assembly.ts';
import type { JsonValue, Message, StepRecord } from './types.ts';

/**
 * One run's history: what the model is handed, its size for the context limit, and the steps it
 * is built from (the run's trajectory, or its last `window` steps).
 */
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
  /** The most steps kept; null keeps every step. */
  readonly #window: number | null;
  /**
   * The kept steps are `#steps` from `#head` on. Dropped steps are cut off in one slice once they
   * outnumber the kept ones: amortised O(1) a step, never a `shift()` of a long array.
   */
  #steps: StepRecord[] = [];
  #head = 0;
  /** With a window: how many messages and characters each step of `#steps` added, to drop them again. */
  #counts: number[] = [];
  #sizes: number[] = [];

  /** `prefix` is copied and frozen: the model sees the request's messages, never its objects. */
  constructor(prefix: readonly Message[], template: string, synthetic: SyntheticTexts, window: number | null = null) {
    this.#prefix = freezeDeep(structuredClone(prefix) as Message[]);
    this.#messages = [...this.#prefix];
    this.#first = this.#prefix[0];
    this.#last = this.#prefix.at(-1);
    this.#template = template;
    this.#synthetic = synthetic;
    this.#window = window;
  }

  /** The array to hand to the model; valid until the next `add`. */
  get messages(): readonly Message[] {
    return this.#messages;
  }

  /** Characters of the kept steps' turns (the prefix not counted). */
  get size(): number {
    return this.#size;
  }

  /** The kept steps, oldest first: every step, or the last `window`. */
  get steps(): StepRecord[] {
    return this.#head === 0 ? this.#steps : this.#steps.slice(this.#head);
  }

  /** The last step kept: the run's last completed step; null before the first. */
  get lastStep(): StepRecord | null {
    return this.#steps.at(-1) ?? null;
  }

  /** The steps a resumed run keeps of those its log holds: all, or the last `window`. */
  resumeFrom(trajectory: readonly StepRecord[]): void {
    const from = this.#window === null ? 0 : Math.max(0, trajectory.length - this.#window);
    for (let i = from; i < trajectory.length; i++) this.add(trajectory[i] as StepRecord);
  }

  /** Keep a completed step and append the turns it adds (incrementally); drop the oldest beyond the window. */
  add(step: StepRecord): void {
    this.#steps.push(step);
    const added = this.#turns(step);
    const size = messagesSize(added);
    if (added.length > 0) {
      for (const m of added) this.#messages.push(m);
      this.#first ??= added[0];
      this.#last = added.at(-1);
      this.#size += size;
    }
    if (this.#window === null) return;
    this.#counts.push(added.length);
    this.#sizes.push(size);
    if (this.#steps.length - this.#head > this.#window) this.#dropOldest();
  }

  /**
   * After a model call: if the caller changed the array's length or its ends (shifted the system
   * message out, emptied it, froze it, swapped the last message), rebuild it from the prefix and
   * the kept steps, as a resume builds it.
   */
  keep(expectedLength: number): void {
    const m = this.#messages;
    if (
      m.length === expectedLength &&
      !Object.isFrozen(m) &&
      m[0] === this.#first &&
      m[expectedLength - 1] === this.#last
    )
      return;
    const rebuilt: Message[] = [...this.#prefix];
    for (let i = this.#head; i < this.#steps.length; i++) rebuilt.push(...this.#turns(this.#steps[i] as StepRecord));
    this.#messages = rebuilt;
    this.#first = rebuilt[0];
    this.#last = rebuilt.at(-1);
  }

  /**
   * Drop the oldest kept step and its turns, which follow the prefix. The splice moves the window's
   * messages (bounded by the window, not by the run); the step lists are cut when half is dropped.
   */
  #dropOldest(): void {
    const head = this.#head;
    const count = this.#counts[head] as number;
    if (count > 0) {
      this.#messages.splice(this.#prefix.length, count);
      this.#size -= this.#sizes[head] as number;
      this.#first = this.#messages[0];
      this.#last = this.#messages.at(-1);
    }
    this.#head = head + 1;
    if (this.#head * 2 >= this.#steps.length) {
      this.#steps = this.#steps.slice(this.#head);
      this.#counts = this.#counts.slice(this.#head);
      this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
  }

  #turns(step: StepRecord): Message[] {
    return freezeMessages(stepHistory(step, this.#template, this.#synthetic));
  }
}

/**
 * The most steps a run keeps under `snapshot` (its `historyWindow`, written only when given), or
 * null: every step. What reads a run's window from its log, for results rebuilt from it.
 */
export function windowOf(snapshot: Readonly<Record<string, JsonValue>>): number | null {
  const w = snapshot['historyWindow'];
  const steps =
    typeof w === 'object' && w !== null && !Array.isArray(w) ? (w as Record<string, JsonValue>)['steps'] : null;
  return typeof steps === 'number' && Number.isSafeInteger(steps) && steps >= 1 ? steps : null;
}

/** The steps a run keeps of `trajectory` under `window`: the last `window`, or all of them. */
export function keptSteps(trajectory: readonly StepRecord[], window: number | null): readonly StepRecord[] {
  return window === null || trajectory.length <= window ? trajectory : trajectory.slice(-window);
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
