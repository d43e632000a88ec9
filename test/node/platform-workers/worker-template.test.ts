/**
 * The copyable Worker template (examples/worker/): it bundles with its own wrangler.toml
 * (`wrangler deploy --dry-run`), and in real workerd (Miniflare) it drives a run through
 * openAIModel against the loopback OpenAI fake, the key read from a secret binding and the base
 * URL from a var. The template imports `polyloop/*`; here those names point at the source.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { startOpenAIFake } from '../adapters/serve.ts';
import { bundleWorker, ROOT } from './miniflare-harness.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';

const run = promisify(execFile);
const TEMPLATE = join(ROOT, 'examples/worker');
/** What the template's `polyloop/*` imports are in this repository (a copy gets them from the installed package). */
const ALIASES: Record<string, string> = {
  polyloop: join(ROOT, 'src/core/index.ts'),
  'polyloop/workers': join(ROOT, 'src/platform-workers/index.ts'),
  'polyloop/adapters/openai': join(ROOT, 'src/adapters/openai.ts'),
};
// Removed after the afterAll below has disposed of the Miniflare that persisted there.
const dirs = sharedTempDirs();
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const c of cleanups) await c();
});

const tempDir = (): Promise<string> => dirs.make('polyloop-template-');

describe('the Worker template (examples/worker)', () => {
  it('bundles, copied as the README says, with its own wrangler.toml (wrangler deploy --dry-run), both Durable Objects and the model var bound', async () => {
    const copy = await tempDir();
    for (const file of ['worker.ts', 'wrangler.toml']) copyFileSync(join(TEMPLATE, file), join(copy, file));
    // What installing polyloop gives a copy, here: its import names resolved to the source.
    appendFileSync(
      join(copy, 'wrangler.toml'),
      `\n[alias]\n${Object.entries(ALIASES)
        .map(([name, file]) => `${JSON.stringify(name)} = ${JSON.stringify(file)}`)
        .join('\n')}\n`,
    );
    const outdir = join(copy, 'out');
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir],
      {
        cwd: copy,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', NO_COLOR: '1' },
        timeout: 120_000,
      },
    );
    expect(stdout).toMatch(/--dry-run: exiting now/);
    expect(stdout).toMatch(/env\.RUNS \(RunObject\)\s+Durable Object/);
    expect(stdout).toMatch(/env\.RUN_INDEX \(RunIndex\)\s+Durable Object/);
    expect(stdout).toMatch(/env\.OPENAI_MODEL \("gpt-4\.1-mini"\)/);
    const bundle = readFileSync(join(outdir, 'worker.js'), 'utf8');
    expect(bundle).toMatch(/class RunObject/);
    expect(bundle).toMatch(/RunIndex = class extends DurableObject/);
  }, 120_000);

  it('runs a goal to its final answer in workerd through openAIModel on the loopback fake, the key from the secret, listed by GET /runs', async () => {
    const fake = await startOpenAIFake([
      { kind: 'reply', text: null, toolCalls: [{ id: 'call_0', name: 'add', arguments: '{"a":2,"b":3}' }] },
      { kind: 'reply', text: 'Two plus three is 5.' },
    ]);
    cleanups.push(fake.close);
    const mf = new Miniflare({
      modules: true,
      script: await bundleWorker(join(TEMPLATE, 'worker.ts'), ALIASES),
      compatibilityDate: '2026-04-20',
      durableObjects: {
        RUNS: { className: 'RunObject', useSQLite: true },
        RUN_INDEX: { className: 'RunIndex', useSQLite: true },
      },
      durableObjectsPersist: await tempDir(),
      bindings: {
        POLYLOOP_TOKEN: 'template-token',
        OPENAI_API_KEY: 'sk-template-secret',
        OPENAI_MODEL: 'gpt-template',
        OPENAI_BASE_URL: fake.baseURL,
      },
    });
    cleanups.push(() => mf.dispose());
    const api = async (
      path: string,
      init: { method?: string; body?: unknown } = {},
    ): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await mf.dispatchFetch(`http://template.test${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: 'Bearer template-token', 'content-type': 'application/json' },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    expect((await api('/runs', { method: 'POST', body: { input: 'no goal' } })).status).toBe(400);
    const created = await api('/runs', { method: 'POST', body: { runId: 'sum-1', input: { goal: 'What is 2 + 3?' } } });
    expect(created).toEqual({ status: 201, body: { runId: 'sum-1' } });
    let status: Record<string, unknown> = {};
    for (
      const until = Date.now() + 30_000;
      status['status'] !== 'ended' && Date.now() < until;
      await new Promise((r) => setTimeout(r, 50))
    ) {
      status = (await api('/runs/sum-1')).body;
    }
    expect(status).toMatchObject({
      status: 'ended',
      stopReason: 'final_answer',
      finalAnswer: 'Two plus three is 5.',
      steps: 2,
      validActions: 1,
    });
    const trajectory = (await api('/runs/sum-1/trajectory')).body as { steps: { observation: string | null }[] };
    expect(trajectory.steps[0]?.observation).toBe('5');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]?.headers['authorization']).toBe('Bearer sk-template-secret');
    expect(fake.requests[0]?.body['model']).toBe('gpt-template');
    let listed: unknown[] = [];
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      listed = (await api('/runs')).body['runs'] as unknown[];
      if (JSON.stringify(listed).includes('"ended"')) break;
    }
    expect(listed).toEqual([expect.objectContaining({ runId: 'sum-1', status: 'ended', stopReason: 'final_answer' })]);
    expect((await api('/runs/sum-1/cancel', { method: 'POST' })).status).toBe(409);
  }, 60_000);
});
