/** The pure parts of polyloop/mcp: what annotations may decide, and how a result reads. */
import { describe, expect, it } from 'vitest';
import { needsApprovalOf, mcpReplayPolicy } from '../../../src/mcp/policy.ts';
import { renderPart, renderResult, truncate } from '../../../src/mcp/render.ts';
import type { McpToolAnnotations } from '../../../src/mcp/policy.ts';

describe('mcpReplayPolicy', () => {
  it.each<[McpToolAnnotations | undefined, boolean, 'safe' | 'never']>([
    [{ readOnlyHint: true }, true, 'safe'],
    [{ readOnlyHint: true }, false, 'never'],
    [{ idempotentHint: true, destructiveHint: false }, true, 'safe'],
    [{ idempotentHint: true, destructiveHint: false }, false, 'never'],
    [{ idempotentHint: true }, true, 'never'],
    [{ idempotentHint: true, destructiveHint: true }, true, 'never'],
    [{ destructiveHint: false }, true, 'never'],
    [{ readOnlyHint: 'true' }, true, 'never'],
    [{ readOnlyHint: 1 }, true, 'never'],
    [undefined, true, 'never'],
  ])('%j from a server trusted: %s → %s', (hints, trusted, expected) => {
    expect(mcpReplayPolicy(hints, trusted)).toBe(expected);
  });

  it('takes the user’s override over the server’s word, either way', () => {
    expect(mcpReplayPolicy({ readOnlyHint: true }, true, { replayPolicy: 'never' })).toBe('never');
    expect(mcpReplayPolicy({ destructiveHint: true }, false, { replayPolicy: 'safe' })).toBe('safe');
  });
});

describe('needsApprovalOf', () => {
  it.each<[McpToolAnnotations | undefined, boolean, boolean | 'destructive', boolean]>([
    [{ readOnlyHint: true }, true, 'destructive', false],
    [{ destructiveHint: false }, true, 'destructive', false],
    [{ idempotentHint: true }, true, 'destructive', true],
    [{ readOnlyHint: true }, false, 'destructive', true],
    [undefined, true, 'destructive', true],
    [{ readOnlyHint: true }, true, true, true],
    [{ destructiveHint: true }, true, false, false],
  ])('%j from a server trusted: %s, needsApproval %s → %s', (hints, trusted, approval, expected) => {
    expect(needsApprovalOf(hints, trusted, approval)).toBe(expected);
  });
});

describe('rendering a result', () => {
  it.each<[unknown, string]>([
    [{ type: 'text', text: 'a\nb' }, 'a\nb'],
    [{ type: 'image', mimeType: 'image/jpeg', data: 'AAAA' }, '[image: image/jpeg, 3 bytes]'],
    [{ type: 'audio', data: 'AA==' }, '[audio: unknown type, 1 bytes]'],
    [{ type: 'resource_link', uri: 'https://x/y' }, '[resource link: https://x/y]'],
    [{ type: 'resource', resource: { uri: 'u', blob: 'AAA=' } }, '[resource: u, unknown type, 2 bytes]'],
    [{ type: 'video', data: 'x' }, '[a content part of type "video"]'],
    ['text', '[a content part that is not an object]'],
    [{ type: 'text', text: 7 }, '[a text part without text]'],
  ])('%j reads as %j', (part, expected) => {
    expect(renderPart(part)).toBe(expected);
  });

  it('joins the parts, says an error is one, and falls back to the structured content', () => {
    expect(
      renderResult({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
    expect(renderResult({ content: [], isError: true })).toBe('The tool reported an error: (no details)');
    expect(renderResult({ content: [], structuredContent: { n: 1 } })).toBe('{"n":1}');
    expect(renderResult(null)).toBe('');
  });

  it('cuts a long text to the limit with a marker, never inside a surrogate pair', () => {
    const cut = truncate('a'.repeat(200), 100);
    expect(cut.length).toBeLessThanOrEqual(100);
    expect(cut).toMatch(/^a+\n\[… truncated: \d+ of 200 characters not shown\]$/);
    expect(truncate('short', 100)).toBe('short');
    const emoji = truncate('😀'.repeat(100), 60);
    expect(emoji.length).toBeLessThanOrEqual(60);
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});

describe('truncate with a limit shorter than its marker', () => {
  it.each([1, 10, 40])('keeps a cut text within %i characters', (max) => {
    const cut = truncate('a'.repeat(200), max);
    expect(cut.length).toBeLessThanOrEqual(max);
    expect(cut.length).toBeGreaterThan(0);
  });
});
