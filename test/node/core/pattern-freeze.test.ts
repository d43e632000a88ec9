/**
 * A schema's regular expression cannot freeze the process: `^(a+)+$` (and its kin) against a
 * model-chosen string, through every road a schema reaches the registry by. Each scenario runs in
 * a worker thread (`pattern-scenarios.ts`, bundled by esbuild) that this test ends if it has not
 * answered by the deadline — a backtracking matcher needs about 2^35 steps for 35 characters, and
 * a blocked thread can be neither cancelled nor timed out from inside. The deadline only keeps a
 * regression from hanging the suite; it is no measure of speed (that is `npm run bench`).
 */
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECTED_VERDICTS } from '../../fixtures/pattern-cases.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { startRawMcp } from '../mcp/raw-server.ts';
import type { RawServer } from '../mcp/raw-server.ts';

const DEADLINE_MS = 20_000;
const dir = await sharedTempDirs().make('polyloop-patterns-');
const bundle = join(dir, 'scenarios.mjs');
let server: RawServer;
let reporting: RawServer;

beforeAll(async () => {
  const out = await build({
    entryPoints: [fileURLToPath(new URL('./pattern-scenarios.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    // CommonJS dependencies bundled into ESM call require(): give them one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  writeFileSync(bundle, out.outputFiles[0]?.text ?? '');
  const tools = [
    {
      name: 'echo',
      description: 'Echoes',
      inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, required: ['s'] },
    },
  ];
  server = await startRawMcp({ tools, call: (_c, res) => void res.writeHead(500).end() });
  const report = [
    {
      name: 'report',
      description: 'Reports',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
    },
  ];
  reporting = await startRawMcp({
    tools: report,
    call: (c, res) => {
      const result = { content: [{ type: 'text', text: 'report' }], structuredContent: { s: `${'a'.repeat(35)}!` } };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: c.id, result }));
    },
  });
});

afterAll(async () => {
  await server?.close();
  await reporting?.close();
});

/** The scenario's answer, or `{ blocked: true }` when the thread had not answered by the deadline. */
async function inWorker(name: string, input = ''): Promise<unknown> {
  const worker = new Worker(bundle);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ blocked: true }), DEADLINE_MS);
      worker.once('message', (m: { ok: boolean; value?: unknown; error?: string }) => {
        clearTimeout(timer);
        if (m.ok) resolve(m.value);
        else reject(new Error(m.error));
      });
      worker.once('error', (e) => (clearTimeout(timer), reject(e)));
      worker.postMessage({ name, input });
    });
  } finally {
    await worker.terminate();
  }
}

const NOT_MATCHED = { status: 'not_executed', observationIsSynthetic: true };

describe('a catastrophic-backtracking pattern meets a model-chosen string', () => {
  it(
    'refuses "a"×35 + "!" against ^(a+)+$ as not_executed, saying the pattern did not match, and a 10,000-character one too',
    async () => {
      const outcomes = (await inWorker('registry')) as { observation: string }[];
      expect(outcomes).toMatchObject([NOT_MATCHED, NOT_MATCHED]);
      for (const o of outcomes)
        expect(o.observation).toMatch(/arguments of "echo" do not match its schema: #\/s: .*pattern/);
    },
    DEADLINE_MS + 10_000,
  );

  it(
    'answers every place a pattern can sit — patternProperties keys, propertyNames, $defs by $ref, if/then, unicode classes, format url',
    async () => {
      expect(await inWorker('verdicts')).toEqual(EXPECTED_VERDICTS);
    },
    DEADLINE_MS + 10_000,
  );

  it(
    'refuses the argument of a polyloop/zod tool whose schema has .regex(/^(a+)+$/), before zod parses it',
    async () => {
      expect(await inWorker('zod')).toMatchObject(NOT_MATCHED);
    },
    DEADLINE_MS + 10_000,
  );

  it(
    'refuses the argument of an MCP tool whose inputSchema has that pattern, without calling the server',
    async () => {
      expect(await inWorker('mcp', server.url)).toMatchObject(NOT_MATCHED);
      expect(server.seen.filter((s) => s.rpc === 'tools/call')).toEqual([]);
    },
    DEADLINE_MS + 10_000,
  );

  it(
    "checks an MCP tool's structured output against its outputSchema in linear time too (the server picks both): a mismatch is answered at once",
    async () => {
      expect(await inWorker('mcpOutput', reporting.url)).toMatchObject({
        status: 'executed',
        observation: expect.stringMatching(/does not match the tool's output schema.*pattern/),
      });
    },
    DEADLINE_MS + 10_000,
  );

  it(
    'lets a run whose model sends such an argument go on to its final answer',
    async () => {
      expect(await inWorker('run')).toMatchObject({
        stopReason: 'final_answer',
        status: 'not_executed',
        observation: expect.stringMatching(/pattern/),
      });
    },
    DEADLINE_MS + 10_000,
  );

  it(
    'lets the caller cancel a run whose model keeps sending such arguments',
    async () => {
      expect(await inWorker('cancel')).toMatchObject({ rejected: 'cancelled by the test', stopReason: 'cancelled' });
    },
    DEADLINE_MS + 10_000,
  );
});
