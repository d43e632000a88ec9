/**
 * The parser of the linear-time pattern matcher (`linear-pattern.ts`): recursive descent over the
 * ECMA-262 `u`-mode grammar, from a pattern's source to a tree of single-character atoms,
 * assertions, sequences, alternatives and repetitions. What needs backtracking (backreferences,
 * lookaround) is refused here, with a sentence saying why.
 * @module
 */

/** The deepest nesting of groups the parser follows. */
const MAX_NESTING = 250;

/** A parsed pattern. */
export type PatternNode =
  | { readonly t: 'char'; readonly cp: number }
  | { readonly t: 'set'; readonly src: string }
  | { readonly t: 'assert'; readonly kind: Assertion }
  | { readonly t: 'cat'; readonly items: readonly PatternNode[] }
  | { readonly t: 'alt'; readonly items: readonly PatternNode[] }
  | { readonly t: 'rep'; readonly node: PatternNode; readonly min: number; readonly max: number };

/** What an assertion atom (`^`, `$`, `\b`, `\B`) asks of its position. */
export type Assertion = 'start' | 'end' | 'boundary' | 'nonBoundary';

/** A refusal, carried out of the parser and the compiler to `compilePattern`, which answers with its reason. */
export class Refusal {
  constructor(readonly reason: string) {}
}

/** The tree of `source`, which has already compiled natively; throws a {@link Refusal}. */
export function parsePattern(source: string): PatternNode {
  return new Parser(source).parse();
}

const HEX = /^[0-9a-fA-F]+$/;
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

/** Recursive descent over the `u`-mode grammar; the source has already compiled natively. */
class Parser {
  #i = 0;
  #depth = 0;
  constructor(readonly src: string) {}

  parse(): PatternNode {
    const node = this.#alternation();
    if (this.#i < this.src.length) throw new Refusal(`has an unexpected ${JSON.stringify(this.src[this.#i])}`);
    return node;
  }

  #alternation(): PatternNode {
    const items = [this.#sequence()];
    while (this.src[this.#i] === '|') {
      this.#i++;
      items.push(this.#sequence());
    }
    return items.length === 1 ? (items[0] as PatternNode) : { t: 'alt', items };
  }

  #sequence(): PatternNode {
    const items: PatternNode[] = [];
    while (this.#i < this.src.length && this.src[this.#i] !== '|' && this.src[this.#i] !== ')') {
      items.push(this.#quantified(this.#atom()));
    }
    return items.length === 1 ? (items[0] as PatternNode) : { t: 'cat', items };
  }

  #atom(): PatternNode {
    const c = this.src[this.#i] as string;
    if (c === '^' || c === '$') {
      this.#i++;
      return { t: 'assert', kind: c === '^' ? 'start' : 'end' };
    }
    if (c === '(') return this.#group();
    if (c === '.') return this.#set(this.#i + 1);
    if (c === '[') return this.#set(this.#classEnd());
    if (c === '\\') return this.#escape();
    const cp = this.src.codePointAt(this.#i) as number;
    this.#i += cp > 0xffff ? 2 : 1;
    return { t: 'char', cp };
  }

  #group(): PatternNode {
    if (++this.#depth > MAX_NESTING) throw new Refusal(`nests groups more than ${MAX_NESTING} deep`);
    let at = this.#i + 1;
    if (this.src[at] === '?') {
      const rest = this.src.slice(at + 1, at + 3);
      if (rest.startsWith(':')) at += 2;
      else if (rest.startsWith('=') || rest.startsWith('!')) throw refused('a lookahead', '(?=…)');
      else if (rest === '<=' || rest === '<!') throw refused('a lookbehind', '(?<=…)');
      else if (rest.startsWith('<')) at = this.src.indexOf('>', at) + 1;
      else {
        const syntax = JSON.stringify(`(?${rest}`);
        throw new Refusal(`uses the group syntax ${syntax}, which the linear-time matcher does not read`);
      }
    }
    this.#i = at;
    const inner = this.#alternation();
    if (this.src[this.#i] !== ')') throw new Refusal('has an unclosed group');
    this.#i++;
    this.#depth--;
    return inner;
  }

  /** The index just past the class that starts at `#i` (`]` ends it unless escaped; `[` inside is literal). */
  #classEnd(): number {
    let j = this.#i + 1;
    while (j < this.src.length && this.src[j] !== ']') j += this.src[j] === '\\' ? 2 : 1;
    if (j >= this.src.length) throw new Refusal('has an unclosed character class');
    return j + 1;
  }

  /** A one-character atom the native engine decides: the source from `#i` to `end`. */
  #set(end: number): PatternNode {
    const src = this.src.slice(this.#i, end);
    this.#i = end;
    return { t: 'set', src };
  }

  #escape(): PatternNode {
    const c = this.src[this.#i + 1] ?? '';
    if (c === 'b' || c === 'B') {
      this.#i += 2;
      return { t: 'assert', kind: c === 'b' ? 'boundary' : 'nonBoundary' };
    }
    if (/^[1-9]$/.test(c) || c === 'k') throw refused('a backreference', c === 'k' ? '\\k<name>' : `\\${c}`);
    if ('dDwWsS'.includes(c) && c !== '') return this.#set(this.#i + 2);
    if (c === 'p' || c === 'P') return this.#set(this.src.indexOf('}', this.#i) + 1);
    const cp = this.#escapedCodePoint();
    return { t: 'char', cp };
  }

  /**
   * The code point of a character escape at `#i` (`\n`, `\cJ`, `\x41`, `\u{1F600}`, `\uD83D\uDE00`, `\.`),
   * moving past it.
   */
  #escapedCodePoint(): number {
    const c = this.src[this.#i + 1] ?? '';
    const control = CONTROL_ESCAPES[c];
    if (control !== undefined) return this.#advance(2, control);
    if (c === '0') return this.#advance(2, 0);
    if (c === 'c') return this.#advance(3, (this.src.charCodeAt(this.#i + 2) as number) % 32);
    if (c === 'x') return this.#advance(4, this.#hex(this.#i + 2, 2));
    if (c === 'u' && this.src[this.#i + 2] === '{') {
      const close = this.src.indexOf('}', this.#i);
      return this.#advance(close + 1 - this.#i, this.#hex(this.#i + 3, close - this.#i - 3));
    }
    if (c === 'u') {
      const lead = this.#hex(this.#i + 2, 4);
      // In `u` mode an escaped surrogate pair is one code point, as if written literally.
      const trail = this.src.startsWith('\\u', this.#i + 6) ? this.#hexOrNull(this.#i + 8, 4) : null;
      if (lead >= 0xd800 && lead <= 0xdbff && trail !== null && trail >= 0xdc00 && trail <= 0xdfff) {
        return this.#advance(12, (lead - 0xd800) * 0x400 + (trail - 0xdc00) + 0x10000);
      }
      return this.#advance(6, lead);
    }
    // An identity escape: in `u` mode only syntax characters and `/`, one code unit each.
    if (c === '' || !/^[$^\\.*+?()[\]{}|/-]$/.test(c)) {
      throw new Refusal(`has an escape ${JSON.stringify(`\\${c}`)} the linear-time matcher does not read`);
    }
    return this.#advance(2, c.charCodeAt(0));
  }

  #advance(by: number, cp: number): number {
    this.#i += by;
    return cp;
  }

  #hexOrNull(at: number, length: number): number | null {
    const digits = this.src.slice(at, at + length);
    return digits.length === length && HEX.test(digits) ? Number.parseInt(digits, 16) : null;
  }

  #hex(at: number, length: number): number {
    const value = this.#hexOrNull(at, length);
    if (value === null) throw new Refusal('has a malformed hexadecimal escape');
    return value;
  }

  #quantified(node: PatternNode): PatternNode {
    const c = this.src[this.#i];
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      this.#i++;
      [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.#i));
      if (!m) return node;
      this.#i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    } else {
      return node;
    }
    // Lazy or greedy answers the same question here: whether there is a match at all.
    if (this.src[this.#i] === '?') this.#i++;
    if (node.t === 'assert') throw new Refusal('repeats an assertion');
    return { t: 'rep', node, min, max };
  }
}

function refused(what: string, example: string): Refusal {
  const why = 'which needs a backtracking matcher; patterns are matched in linear time';
  return new Refusal(`uses ${what} (${example}), ${why}`);
}
