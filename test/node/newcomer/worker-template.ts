/**
 * The Worker template (examples/worker/) as its README says to run it: copied into a project that
 * installed polyloop, secrets in `.dev.vars`, served by `wrangler dev` on loopback; the model is the
 * loopback OpenAI fake, reached through the template's `OPENAI_BASE_URL` var.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOpenAIFake } from '../adapters/serve.ts';

const TOKEN = 'newcomer-token';

/** A port free on loopback right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once `child` prints `Ready on`, rejects if it exits first or `ms` pass. */
function ready(child: ChildProcess, output: () => string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wrangler dev was not ready after ${ms} ms:\n${output()}`)), ms);
    const check = (): void => {
      if (!/Ready on http/.test(output())) return;
      clearTimeout(timer);
      resolve();
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`wrangler dev exited (${code}) before it was ready:\n${output()}`));
    });
  });
}

export type TemplateRun = {
  readonly status: Record<string, unknown>;
  readonly listed: unknown;
  readonly modelRequests: number;
};

/**
 * Copies the template from `clone` into `project` (which has polyloop installed), serves it with
 * the clone's wrangler, starts one run over HTTP and polls it to its end; stops everything after.
 */
export async function runWorkerTemplate(clone: string, project: string, env: NodeJS.ProcessEnv): Promise<TemplateRun> {
  const fake = await startOpenAIFake([
    { kind: 'reply', text: null, toolCalls: [{ id: 'call_0', name: 'add', arguments: '{"a":1234,"b":4321}' }] },
    { kind: 'reply', text: '1234 + 4321 = 5555.' },
  ]);
  for (const f of ['worker.ts', 'wrangler.toml']) copyFileSync(join(clone, 'examples/worker', f), join(project, f));
  writeFileSync(join(project, '.dev.vars'), `POLYLOOP_TOKEN=${TOKEN}\nOPENAI_API_KEY=sk-newcomer\n`);
  const persist = mkdtempSync(join(tmpdir(), 'polyloop-newcomer-do-'));
  const port = await freePort();
  const wrangler = join(clone, 'node_modules/wrangler/bin/wrangler.js');
  const args = [
    wrangler,
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--persist-to',
    persist,
    '--var',
    `OPENAI_BASE_URL:${fake.baseURL}`,
  ];
  const child = spawn(process.execPath, args, {
    cwd: project,
    env: { ...env, WRANGLER_SEND_METRICS: 'false', CI: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  try {
    await ready(child, () => output, 60_000);
    const base = `http://127.0.0.1:${port}`;
    const api = async (path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await fetch(base + path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const created = await api('/runs', { runId: 'sum-1', input: { goal: 'What is 1234 + 4321?' } });
    if (created.status !== 201)
      throw new Error(`POST /runs answered ${created.status}: ${JSON.stringify(created.body)}\n${output}`);
    let status: Record<string, unknown> = {};
    // Bounded: 30 s of polling, then the test reports what it saw.
    for (
      const until = Date.now() + 30_000;
      status['status'] !== 'ended' && Date.now() < until;
      await new Promise((r) => setTimeout(r, 100))
    ) {
      status = (await api('/runs/sum-1')).body;
    }
    const listed = (await api('/runs')).body['runs'];
    return { status, listed, modelRequests: fake.requests.length };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));
    await fake.close();
    rmSync(persist, { recursive: true, force: true });
  }
}
