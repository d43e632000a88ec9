/**
 * Token counts read back from a log feed `RunLogView.usage`, `RunResult.usage` and the
 * `maxTotalTokens` budget of a resumed run: a log whose step or result holds a usage that is not
 * counts (log-format: a field of the wrong type is corruption) is refused, never summed as text.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CorruptLogError, decodeLog, readRunLog } from '../../../src/core/index.ts';

const FIXTURE = new URL('../../fixtures/portability/node-boundary.ndjson', import.meta.url);

/** The fixture with every `usage` of records of `kind` replaced by `usage`. */
function withUsage(kind: 'step' | 'result', usage: unknown): string {
  const lines = readFileSync(FIXTURE, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  return `${lines
    .map((line) => {
      const r = JSON.parse(line) as Record<string, unknown>;
      const holder = (kind === 'step' ? r['step'] : r['reply']) as Record<string, unknown> | undefined;
      if (r['kind'] === kind && holder && holder['usage'] !== null) holder['usage'] = usage;
      return JSON.stringify(r);
    })
    .join('\n')}\n`;
}

describe('a log whose usage is not token counts', () => {
  it('reads the fixture as it is, with numeric totals', () => {
    const view = readRunLog(decodeLog(readFileSync(FIXTURE, 'utf8')).records);
    expect(typeof view.usage.inputTokens).toBe('number');
  });

  it.each([
    ['a count written as text', { inputTokens: '5000', outputTokens: 1 }],
    ['a negative count', { inputTokens: -5, outputTokens: 1 }],
    ['a fractional count', { inputTokens: 1.5, outputTokens: 1 }],
    ['a missing count', { inputTokens: 5 }],
    ['an optional count of the wrong type', { inputTokens: 5, outputTokens: 1, cachedInputTokens: '2' }],
    ['not an object', 'lots'],
  ])('is refused as corrupt when a step holds %s', (_what, usage) => {
    expect(() => decodeLog(withUsage('step', usage))).toThrow(CorruptLogError);
  });

  it('is refused as corrupt when a result reply holds a count written as text', () => {
    expect(() => decodeLog(withUsage('result', { inputTokens: '5000', outputTokens: 1 }))).toThrow(CorruptLogError);
  });
});
