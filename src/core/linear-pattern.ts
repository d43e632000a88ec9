/**
 * A linear-time matcher for the regular expressions of JSON Schema (`pattern`, `patternProperties`):
 * ECMA-262 syntax with the `u` flag, searched anywhere in the string, as `new RegExp(p, 'u').test(s)`
 * answers — but in time proportional to the string's length times the pattern's size, whatever
 * both are. A backtracking engine can spend minutes on `^(a+)+$` against 35 characters; this one
 * never retries a position.
 *
 * How: the pattern is parsed into a tree, compiled to a Thompson automaton and run as a Pike
 * machine (every thread in step, one list entry per state). Each single-character atom — a literal,
 * `.`, a class `[...]`, `\d`, `\p{L}` — is decided by the engine itself, through a native RegExp of
 * that one atom tested on one character: constant time, the engine's exact Unicode tables, no
 * tables shipped here. Refused (the features that need backtracking, which RE2 refuses too):
 * backreferences and lookaround. Also refused: a pattern whose `{n,m}` repetitions expand past
 * {@link MAX_PATTERN_STATES} states. No `eval`; pure, synchronous, Web-standard.
 *
 * The parser is `linear-pattern-parser.ts`; the compiler and the machine are here.
 * @module
 */
import { parsePattern, Refusal } from './linear-pattern-parser.ts';
import type { Assertion, PatternNode } from './linear-pattern-parser.ts';

/** A compiled pattern: `test` answers as `new RegExp(source, 'u').test(input)` would. */
export type LinearPattern = {
  readonly source: string;
  test(input: string): boolean;
};

/** The most automaton states a pattern may compile to; matching costs at most this per character. */
export const MAX_PATTERN_STATES = 10_000;

/**
 * Compile `source` for linear-time matching, or say in a sentence why it cannot be: not a valid
 * `u`-flag regular expression, a backreference or lookaround, or too many states. Never throws.
 */
export function compilePattern(source: string): LinearPattern | { readonly problem: string } {
  try {
    new RegExp(source, 'u');
  } catch (e) {
    return { problem: `is not a valid regular expression (${e instanceof Error ? e.message : String(e)})` };
  }
  try {
    const tree = parsePattern(source);
    return machineOf(source, new Compiler().compile(tree));
  } catch (e) {
    if (e instanceof Refusal) return { problem: e.reason };
    // A stack overflow on pathological nesting ends here too: refused, never half-compiled.
    return { problem: `cannot be compiled for linear-time matching (${e instanceof Error ? e.message : String(e)})` };
  }
}

const CHAR = 0;
const SET = 1;
const SPLIT = 2;
const ASSERT = 3;
const MATCH = 4;
const ASSERTIONS: readonly Assertion[] = ['start', 'end', 'boundary', 'nonBoundary'];

/**
 * The automaton: per state an op, its argument (code point, set index, assertion, or first branch)
 * and its next state.
 */
type Program = {
  readonly op: number[];
  readonly arg: number[];
  readonly next: number[];
  readonly sets: readonly string[];
  readonly start: number;
};

/** Thompson's construction, built back to front: each node is compiled knowing where it continues. */
class Compiler {
  readonly op: number[] = [];
  readonly arg: number[] = [];
  readonly next: number[] = [];
  readonly sets: string[] = [];
  readonly #setIndex = new Map<string, number>();

  compile(tree: PatternNode): Program {
    const match = this.#emit(MATCH, 0, -1);
    const start = this.#node(tree, match);
    return { op: this.op, arg: this.arg, next: this.next, sets: this.sets, start };
  }

  #emit(op: number, arg: number, next: number): number {
    if (this.op.length >= MAX_PATTERN_STATES) {
      throw new Refusal(`expands to more than ${MAX_PATTERN_STATES} states (its repetition counts are too large)`);
    }
    this.op.push(op);
    this.arg.push(arg);
    this.next.push(next);
    return this.op.length - 1;
  }

  #node(node: PatternNode, next: number): number {
    switch (node.t) {
      case 'char':
        return this.#emit(CHAR, node.cp, next);
      case 'set':
        return this.#emit(SET, this.#set(node.src), next);
      case 'assert':
        return this.#emit(ASSERT, ASSERTIONS.indexOf(node.kind), next);
      case 'cat': {
        let at = next;
        for (let k = node.items.length - 1; k >= 0; k--) at = this.#node(node.items[k] as PatternNode, at);
        return at;
      }
      case 'alt': {
        let at = this.#node(node.items[node.items.length - 1] as PatternNode, next);
        for (let k = node.items.length - 2; k >= 0; k--) {
          at = this.#emit(SPLIT, this.#node(node.items[k] as PatternNode, next), at);
        }
        return at;
      }
      case 'rep':
        return this.#repeat(node.node, node.min, node.max, next);
    }
  }

  /** `body{min,max}`: `min` copies, then either a loop or `max - min` nested optional copies. */
  #repeat(body: PatternNode, min: number, max: number, next: number): number {
    let at: number;
    if (max === Infinity) {
      at = this.#emit(SPLIT, -1, next);
      this.arg[at] = this.#node(body, at);
    } else {
      at = next;
      for (let k = min; k < max; k++) at = this.#emit(SPLIT, this.#node(body, at), next);
    }
    for (let k = 0; k < min; k++) at = this.#node(body, at);
    return at;
  }

  #set(src: string): number {
    let index = this.#setIndex.get(src);
    if (index === undefined) {
      index = this.sets.length;
      this.sets.push(src);
      this.#setIndex.set(src, index);
    }
    return index;
  }
}

const isWordUnit = (u: number): boolean =>
  (u >= 0x30 && u <= 0x39) || (u >= 0x41 && u <= 0x5a) || (u >= 0x61 && u <= 0x7a) || u === 0x5f;

/** Whether every path from `start` meets `^` before it reads a character: then only position 0 can match. */
function anchoredAtStart(p: Program): boolean {
  const seen = new Set<number>();
  const stack = [p.start];
  while (stack.length > 0) {
    const pc = stack.pop() as number;
    if (seen.has(pc)) continue;
    seen.add(pc);
    const op = p.op[pc];
    if (op === ASSERT && p.arg[pc] === 0) continue;
    if (op === CHAR || op === SET || op === MATCH) return false;
    if (op === SPLIT) stack.push(p.arg[pc] as number);
    stack.push(p.next[pc] as number);
  }
  return true;
}

/** The Pike machine over `program`: one native RegExp per distinct set atom, ASCII answers remembered. */
function machineOf(source: string, p: Program): LinearPattern {
  const machine = new PikeMachine(p);
  return Object.freeze({ source, test: (input: string): boolean => machine.test(input) });
}

/**
 * Runs every thread in step over the input's code points. Its lists are reused from call to call
 * (a call runs to its end synchronously, so no two share them); a state is in a list at most once,
 * which `#mark` (the step that last added it, steps counted across calls) tells.
 */
class PikeMachine {
  readonly #p: Program;
  readonly #anchored: boolean;
  readonly #natives: readonly RegExp[];
  /** Per set, per ASCII code point: 0 unknown, 1 in, 2 out (most arguments are ASCII; a native call costs). */
  readonly #ascii: readonly Uint8Array[];
  readonly #mark: Float64Array;
  #current: Int32Array;
  #upcoming: Int32Array;
  readonly #stack: number[] = [];
  #step = 0;

  constructor(p: Program) {
    this.#p = p;
    this.#anchored = anchoredAtStart(p);
    this.#natives = p.sets.map((src) => new RegExp(`^(?:${src})$`, 'u'));
    this.#ascii = p.sets.map(() => new Uint8Array(128));
    this.#mark = new Float64Array(p.op.length).fill(-1);
    this.#current = new Int32Array(p.op.length);
    this.#upcoming = new Int32Array(p.op.length);
  }

  test(input: string): boolean {
    const p = this.#p;
    let count = 0;
    // The last call may have marked states with its last step + 1: start past it.
    this.#step++;
    for (let pos = 0; ; ) {
      const step = ++this.#step;
      if (pos === 0 || !this.#anchored) {
        count = this.#add(this.#current, count, p.start, input, pos, step);
        if (count < 0) return true;
      }
      if (pos >= input.length || (count === 0 && this.#anchored)) return false;
      const cp = input.codePointAt(pos) as number;
      const width = cp > 0xffff ? 2 : 1;
      let next = 0;
      for (let k = 0; k < count; k++) {
        const at = this.#current[k] as number;
        const ok = p.op[at] === CHAR ? p.arg[at] === cp : this.#inSet(p.arg[at] as number, cp, input, pos, width);
        if (!ok) continue;
        next = this.#add(this.#upcoming, next, p.next[at] as number, input, pos + width, step + 1);
        if (next < 0) return true;
      }
      [this.#current, this.#upcoming] = [this.#upcoming, this.#current];
      count = next;
      pos += width;
    }
  }

  #inSet(set: number, cp: number, input: string, pos: number, width: number): boolean {
    const native = this.#natives[set] as RegExp;
    if (cp >= 128) return native.test(input.slice(pos, pos + width));
    const memo = this.#ascii[set] as Uint8Array;
    if (memo[cp] === 0) memo[cp] = native.test(input[pos] as string) ? 1 : 2;
    return memo[cp] === 1;
  }

  /** Follow the empty moves from `pc` at `pos` into `list` (whose length is `length`); -1 on reaching MATCH. */
  #add(list: Int32Array, length: number, pc: number, input: string, pos: number, step: number): number {
    const { op, arg, next } = this.#p;
    const stack = this.#stack;
    stack.push(pc);
    while (stack.length > 0) {
      const at = stack.pop() as number;
      if (this.#mark[at] === step) continue;
      this.#mark[at] = step;
      const code = op[at];
      if (code === MATCH) {
        stack.length = 0;
        return -1;
      }
      if (code === CHAR || code === SET) list[length++] = at;
      else if (code === SPLIT) stack.push(next[at] as number, arg[at] as number);
      else if (holds(arg[at] as number, input, pos)) stack.push(next[at] as number);
    }
    return length;
  }
}

/** Whether assertion `kind` (an index of ASSERTIONS) holds at `pos`. Without the `m` flag, `^` and `$` are the ends. */
function holds(kind: number, input: string, pos: number): boolean {
  if (kind === 0) return pos === 0;
  if (kind === 1) return pos === input.length;
  const before = pos > 0 && isWordUnit(input.charCodeAt(pos - 1));
  const after = pos < input.length && isWordUnit(input.charCodeAt(pos));
  return (before !== after) === (kind === 2);
}
