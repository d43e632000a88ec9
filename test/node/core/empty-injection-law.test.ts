/**
 * The empty-injection law (docs/design/laws.md#empty-injection): empty injections and an empty
 * registry assemble byte-identical messages.
 */
import { describe, expect, it } from 'vitest';
import { run, ToolRegistry } from '../../../src/core/index.ts';
import type { RunRequest } from '../../../src/core/index.ts';
import { harness } from './fixtures.ts';

const script = ['not json', '{"final":"ok"}'];
const empty = ToolRegistry.of([]);

async function modelInput(request: Partial<RunRequest>): Promise<string> {
  const h = harness({ script, request: { tools: empty, executor: empty.executor(), ...request } });
  await run(h.agent, h.request);
  return JSON.stringify(h.model.calls.map((c) => ({ messages: c.messages, tools: c.tools })));
}

describe('the empty-injection law', () => {
  const baseline = modelInput({ injections: {}, toolRenderStyle: 'none' });

  it.each([
    ['an injection map of empty channels', { injections: { skills: [], memory: [] } }],
    ['an empty registry rendered as markdown', { toolRenderStyle: 'markdown' as const }],
    ['an empty registry rendered as json', { toolRenderStyle: 'json' as const }],
    ['both at once', { injections: { a: [] }, toolRenderStyle: 'markdown' as const }],
  ])('gives byte-identical model input for %s', async (_name, request) => {
    expect(await modelInput(request)).toBe(await baseline);
  });

  it('differs as soon as one injection entry is present (the comparison can fail)', async () => {
    const withEntry = await modelInput({ injections: { skills: [{ name: 'style', text: 'Be brief.' }] } });
    expect(withEntry).not.toBe(await baseline);
    expect(withEntry).toContain('style\\nBe brief.');
  });
});
