/**
 * The JSON Schema validator of tool arguments: `@cfworker/json-schema`'s lookup table and
 * validation (`schema-validate.ts`), with every regular expression a model's string meets matched
 * in linear time — `pattern` and `patternProperties` by `linear-pattern.ts`, the `format` checks
 * by cfworker's own, except `url`, whose expression backtracks exponentially (30 characters take
 * seconds) and is matched here by an equivalent one. No `eval`, so it runs in workerd.
 * @module
 */
import { dereference, format as cfworkerFormats } from '@cfworker/json-schema';
import type { Schema, ValidationResult } from '@cfworker/json-schema';
import { compilePattern } from './linear-pattern.ts';
import type { LinearPattern } from './linear-pattern.ts';
import { validate } from './schema-validate.ts';
import type { ValidateContext } from './schema-validate.ts';

const OCTET = '(?:1?\\d{1,2}|2[0-4]\\d|25[0-5])';
const LAST_OCTET = '(?:[1-9]\\d?|1\\d\\d|2[0-4]\\d|25[0-4])';
/** 1–223 but 10, 127, 169, 172 and 192, whose private ranges cfworker refuses by lookahead. */
const FIRST_OCTET =
  '(?:[1-9]|1[1-9]|[2-9]\\d|1[013-5]\\d|12[0-689]|16[0-8]|17[013-9]|18\\d|19[013-9]|2[01]\\d|22[0-3])';
/** cfworker's public IPv4 address, its lookaheads spelt out: 169.254, 192.168 and 172.16–31 left out. */
const PUBLIC_IPV4 =
  `(?:${FIRST_OCTET}(?:\\.${OCTET}){2}` +
  `|169\\.(?:1?\\d{1,2}|2[0-4]\\d|25[0-35])\\.${OCTET}` +
  `|192\\.(?:\\d{1,2}|1(?:[0-57-9]\\d|6[0-79])|2[0-4]\\d|25[0-5])\\.${OCTET}` +
  `|172\\.(?:\\d|0\\d|1[0-5]|3[2-9]|[4-9]\\d|1\\d\\d|2[0-4]\\d|25[0-5])\\.${OCTET})\\.${LAST_OCTET}`;
/** A host label character: cfworker's `[a-z\u{00a1}-\u{ffff}0-9]` under its `i` flag. */
const LABEL = '[a-zA-Z0-9\\u{00a1}-\\u{ffff}]';
/** The last label (the top-level domain): two or more such characters, digits aside. */
const TOP_LABEL = '(?:\\.(?:[a-zA-Z\\u{00a1}-\\u{ffff}]{2,}))';
const HOSTNAME = `(?:(?:${LABEL}+-?)*${LABEL}+)(?:\\.(?:${LABEL}+-?)*${LABEL}+)*${TOP_LABEL}`;
/**
 * cfworker's `url` format without lookahead or `i` flag, for the linear-time matcher (`ſ` folds
 * to `s` under `i`). `test/node/core/schema-validator.test.ts` compares the two on generated URLs.
 */
const URL_SOURCE =
  `^(?:(?:[hH][tT][tT][pP][sSſ]?|[fF][tT][pP]):\\/\\/)(?:\\S+(?::\\S*)?@)?(?:${PUBLIC_IPV4}|${HOSTNAME})` +
  '(?::\\d{2,5})?(?:\\/[^\\s]*)?$';

let url: LinearPattern | null = null;

/** The check of a `format`: cfworker's, `url` matched in linear time; undefined for an annotation-only format. */
export function formatCheck(name: string): ((input: string) => boolean) | undefined {
  if (name === 'url') {
    url ??= compilePattern(URL_SOURCE) as LinearPattern;
    return url.test;
  }
  return Object.hasOwn(cfworkerFormats, name)
    ? (cfworkerFormats as Record<string, (input: string) => boolean>)[name]
    : undefined;
}

/** Exposed for the test that compares it with cfworker's expression. */
export { URL_SOURCE as LINEAR_URL_SOURCE };

/**
 * A draft 2020-12 validator, as cfworker's `Validator` with `shortCircuit` off, whose pattern
 * matching takes linear time. The schema should have passed `schemaProblem` (every pattern
 * compiles); a pattern reached only through a `$ref` into an unknown keyword, which that walk
 * does not read, is compiled when first met, and if it cannot be, `validate` throws.
 */
export class SchemaValidator {
  readonly #schema: Schema | boolean;
  readonly #context: ValidateContext;

  /** Takes ownership of `schema`: the lookup table annotates its objects. */
  constructor(schema: Schema | boolean) {
    this.#schema = schema;
    const patterns = new Map<string, LinearPattern>();
    this.#context = {
      lookup: dereference(schema),
      pattern: (source) => {
        let compiled = patterns.get(source);
        if (compiled === undefined) {
          const result = compilePattern(source);
          if ('problem' in result) throw new Error(`the pattern ${JSON.stringify(source)} ${result.problem}`);
          compiled = result;
          patterns.set(source, compiled);
        }
        return compiled;
      },
      format: formatCheck,
    };
  }

  /** cfworker's verdict and errors for `instance`. Throws on an instance JSON cannot hold. */
  validate(instance: unknown): ValidationResult {
    return validate(instance, this.#schema, '2020-12', this.#context, false);
  }
}
