/**
 * examples/idempotent-handler cannot rot: its story runs as the docs tell it (a stalled driver's
 * late payment request reaches the API after a person's retry and charges nothing), and the
 * handler docs/api.md shows is the example's, line for line.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stalledDriverStory } from '../../../examples/idempotent-handler/main.ts';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('examples/idempotent-handler', () => {
  it('pays once: driver A loses its lease mid-request and writes nothing, B retries, A’s late request is deduplicated', async () => {
    const story = await stalledDriverStory();
    expect(story.driverA).toBe('LeaseLostError');
    expect(story.logAfterA).not.toContain('step');
    expect(story.logAfterA).not.toContain('run_ended');
    expect(story.logAfterA.at(-1)).toBe('intent');
    expect(story).toMatchObject({ asked: 'settle', answered: 'retry', driverB: 'final_answer' });
    expect(story.finalAnswer).toBe('charged 40 to acme (ch_1)');
    // Both attempts reached the API; the key made the second one charge nothing.
    expect(story.requests).toBe(2);
    expect(story.charges).toEqual([{ id: 'ch_1', key: 'order-7%3As0.action', amount: 40, to: 'acme' }]);
  });

  it('the handler in docs/api.md is the example’s, line for line', async () => {
    const doc = await readFile(join(ROOT, 'docs/api.md'), 'utf8');
    const example = await readFile(join(ROOT, 'examples/idempotent-handler/main.ts'), 'utf8');
    const section = doc.slice(doc.indexOf("\n### A handler's signal and its idempotency key\n"));
    const block = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
    expect(block).toBeDefined();
    for (const line of (block as string).split('\n').filter((l) => l.trim() !== '' && !l.includes('…')))
      expect(example).toContain(line.trim());
  });
});
