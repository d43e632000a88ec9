/**
 * One trace across a real crash (docs/observability.md#one-trace-across-crashes): a Node process
 * runs an agent on a FileStore, traced by `otelSink`, and is SIGKILLed inside a slow tool; a second
 * process resumes the run. The spans both processes wrote (each start and end appended to a file
 * as it happens) form one trace: the first process's `invoke_agent` span — the one
 * `run_started.traceparent` names, left open by the kill — parents its model calls and tools, and
 * the second process's `invoke_agent` is its child and links to it. The log marks where the second
 * process took over (`readRunLog(...).resumes`).
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { sharedTempDirs, tempDir } from '../../support/temp-dir.ts';
import { finished, waitForLine } from '../platform-node/helpers.ts';
import { traceparentIds } from './span-lines.ts';
import type { SpanLine } from './span-lines.ts';

const dirs = sharedTempDirs();
/** trace-process.ts bundled into one file: each process starts in a fraction of what tsx takes. */
let bundle: string;
beforeAll(async () => {
  bundle = join(await dirs.make('polyloop-trace-kill-bundle-'), 'trace-process.mjs');
  await build({
    entryPoints: [resolve(import.meta.dirname, 'trace-process.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bundle,
    logLevel: 'warning',
    // The OpenTelemetry SDK is CommonJS that requires Node's modules: give the ESM bundle a `require`.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
});
const running: ChildProcessWithoutNullStreams[] = [];
// A process a failed assertion left running is killed when the file ends.
afterAll(() => {
  for (const p of running) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

function spawnProcess(args: readonly string[]): ChildProcessWithoutNullStreams {
  const p = spawn(process.execPath, [bundle, ...args], { stdio: 'pipe' });
  running.push(p);
  return p;
}

const spanLines = (file: string): SpanLine[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as SpanLine);

const named = (lines: readonly SpanLine[], phase: SpanLine['phase']): string[] =>
  lines.filter((l) => l.phase === phase).map((l) => l.name);

describe('one trace across a SIGKILL', () => {
  it('the spans of the killed process and of the one that resumed its run form one trace, the second invoke_agent linked to the first, the takeover marked in the log', async () => {
    const root = await tempDir('polyloop-trace-kill-');
    const dir = join(root, 'runs');
    const spans = join(root, 'spans.ndjson');

    const first = spawnProcess([dir, spans, 'start', 'w1']);
    const firstEnd = finished(first);
    await waitForLine(first, /^IN_FORECAST$/);
    process.kill(first.pid as number, 'SIGKILL');
    expect((await firstEnd).signal).toBe('SIGKILL');
    const before = spanLines(spans);

    const second = spawnProcess([dir, spans, 'resume', 'w1']);
    const done = await finished(second);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(
      `RESULT ${JSON.stringify({ stopReason: 'final_answer', finalAnswer: 'rain tomorrow' })}\n`,
    );
    const after = spanLines(spans).slice(before.length);

    const view = readRunLog(await new FileStore({ dir }).readLog('w1'));
    expect(view.ended?.stopReason).toBe('final_answer');
    const traceparent = view.started?.traceparent;
    expect(traceparent).toBeDefined();
    const firstSpan = traceparentIds(traceparent as string);

    // The killed process: its invoke_agent (the one the log names) and its forecast never ended.
    expect(named(before, 'start')).toEqual([
      'invoke_agent',
      'chat weather-1',
      'execute_tool lookup',
      'chat weather-1',
      'execute_tool forecast',
    ]);
    expect(named(before, 'end')).toEqual(['chat weather-1', 'execute_tool lookup', 'chat weather-1']);
    const [invoke1] = before;
    expect(invoke1).toMatchObject({ name: 'invoke_agent', ...firstSpan, parentSpanId: null, links: [] });
    for (const l of before.slice(1))
      expect(l).toMatchObject({ traceId: firstSpan.traceId, parentSpanId: firstSpan.spanId });

    // The process that resumed: one invoke_agent, the first's child and linked to it; the forecast again.
    expect(named(after, 'end')).toEqual(['execute_tool forecast', 'chat weather-1', 'invoke_agent']);
    const invoke2 = after.find((l) => l.name === 'invoke_agent' && l.phase === 'end') as SpanLine;
    expect(invoke2).toMatchObject({
      traceId: firstSpan.traceId,
      parentSpanId: firstSpan.spanId,
      links: [firstSpan],
      status: 0,
    });
    expect(invoke2.spanId).not.toBe(firstSpan.spanId);
    expect(invoke2.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'w1',
      'polyloop.run.resumed': true,
      'polyloop.run.from_step': 1,
      'polyloop.run.resolution': 'replay_action',
      'polyloop.run.stop_reason': 'final_answer',
    });
    for (const l of after.filter((s) => s !== invoke2 && s.name !== 'invoke_agent'))
      expect(l).toMatchObject({ traceId: firstSpan.traceId, parentSpanId: invoke2.spanId });
    const forecast = after.find((l) => l.name === 'execute_tool forecast' && l.phase === 'end');
    expect(forecast?.attributes).toMatchObject({ 'polyloop.step.index': 1, 'polyloop.replayed': true });

    // One trace, and the log marks the step the second process carried on.
    expect(new Set([...before, ...after].map((l) => l.traceId))).toEqual(new Set([firstSpan.traceId]));
    expect(view.resumes.map(({ stepIndex, resolution }) => ({ stepIndex, resolution }))).toEqual([
      { stepIndex: 1, resolution: 'replay_action' },
    ]);
  });
});
