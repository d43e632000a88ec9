import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineAgent, isPolyLoopError, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { RunRequest } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { collectingSink, jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { finished, spawnTs, waitForLine } from './helpers.ts';
import { tempDir } from '../../support/temp-dir.ts';

const holder = resolve(import.meta.dirname, 'fixtures/hold-lock.ts');

function request(runId: string): RunRequest {
  const tools = ToolRegistry.of([
    {
      name: 'echo',
      description: 'Echoes.',
      parameters: { type: 'object', properties: { text: { type: 'string' } } },
      replayPolicy: 'safe',
      handler: async (a) => String(a['text']),
    },
  ]);
  return {
    runId,
    budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 10_000 },
    executor: tools.executor(),
    tools,
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'echo then finish' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation: {observation}',
    toolRenderStyle: 'none',
    cancelGraceMs: 500,
  };
}

function agentOn(store: FileStore): ReturnType<typeof defineAgent> {
  return defineAgent({
    model: scriptedModel(['{"tool":"echo","args":{"text":"hi"}}', '{"final":"done"}']),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: { notExecuted: 'not executed', envError: 'env error' },
  });
}

describe('FileStore with run/resume', () => {
  it('reports a torn last line as a warning event when resuming, and finishes the run', async () => {
    const dir = await tempDir();
    const quiet = { dir, onWarning: () => undefined };
    const full = await run(agentOn(new FileStore(quiet)), request('torn'));
    const path = new FileStore(quiet).logPath('torn');
    const lines = (await readFile(path, 'utf8')).split('\n').filter(Boolean);
    // Keep run_started + step 0's model intent, then half of its result line: a crash mid-append.
    await writeFile(path, `${lines.slice(0, 2).join('\n')}\n${(lines[2] ?? '').slice(0, 25)}`);
    const events = collectingSink();
    const agent = defineAgent({ ...agentOn(new FileStore(quiet)), events });
    const resumed = await resume(agent, request('torn'));
    expect(resumed.finalAnswer).toBe(full.finalAnswer);
    const warning = events.events.find((e) => e.type === 'warning');
    expect(warning).toMatchObject({ type: 'warning', code: 'torn_tail' });
    expect(events.events.findIndex((e) => e.type === 'warning')).toBe(1);
  });

  it('runs to the end on disk, releases its lock, and resumes an ended run from the file', async () => {
    const dir = await tempDir();
    const result = await run(agentOn(new FileStore({ dir })), request('r1'));
    expect(result.stopReason).toBe('final_answer');
    expect(await readdir(dir)).toEqual(['r-7231.jsonl']);
    const again = await resume(agentOn(new FileStore({ dir })), request('r1'));
    expect(again.trajectory).toEqual(result.trajectory);
  });

  it('refuses to drive a run another live process holds, writing nothing', async () => {
    const dir = await tempDir();
    const store = new FileStore({ dir });
    const child = spawnTs(holder, [dir, 'busy']);
    const exit = finished(child);
    await waitForLine(child, /^held /);
    try {
      const err = await run(agentOn(store), request('busy')).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isPolyLoopError(err, 'run_locked')).toBe(true);
      await expect(stat(store.logPath('busy'))).rejects.toThrow();
    } finally {
      child.kill('SIGKILL');
      await exit;
    }
    const result = await run(agentOn(store), request('busy'));
    expect(result.stopReason).toBe('final_answer');
  });

  it('refuses to resume a log with a corrupt middle line, naming file and line, and leaves the file as it was', async () => {
    const dir = await tempDir();
    const store = new FileStore({ dir });
    await run(agentOn(store), request('r2'));
    const lines = (await readFile(store.logPath('r2'), 'utf8')).split('\n');
    lines[2] = '{"kind":"result", oops';
    const damaged = lines.join('\n');
    await writeFile(store.logPath('r2'), damaged);
    const err = await resume(agentOn(new FileStore({ dir })), request('r2')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isPolyLoopError(err, 'corrupt_log')).toBe(true);
    expect((err as Error).message).toContain(`${store.logPath('r2')}:3`);
    expect(await readFile(store.logPath('r2'), 'utf8')).toBe(damaged);
  });
});
