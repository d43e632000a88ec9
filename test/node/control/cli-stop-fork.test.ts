/**
 * `polyloop stop` and `polyloop fork` through the real launcher, on FileStore runs this test makes
 * with a real agent: a fork resumed runs nothing before its step again, and every bad argument is
 * refused with a clear message, writing nothing. (A stop reaching a live driver: stop-e2e.test.ts.)
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/cli.ts';
import { defineAgent, resume, run, ToolRegistry } from '../../../src/core/index.ts';
import type { AgentDefinition, ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import type { ScriptedModel } from '../../../src/testing/index.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { polyloop as cli } from '../platform-node/helpers.ts';
import { defaultsFor, SYNTHETIC } from '../subagents/family.ts';

/** The real launcher, in a process of its own. */
const polyloop = (...args: string[]): ReturnType<typeof cli> => cli(args);

/** The same command in this process: for the refusals, each of which would cost a process start. */
async function inProcess(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { out: (t) => void (stdout += t), err: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

/** Two notes, then the answer: a finished run has steps 0, 1 and 2. */
const SCRIPT = [
  '{"tool":"note","args":{"text":"a"}}',
  '{"tool":"note","args":{"text":"b"}}',
  '{"final":"noted a and b"}',
];

type NoteAgent = { readonly agent: AgentDefinition; readonly model: ScriptedModel; readonly notes: string[] };

/** The agent of the runs here; each call makes a fresh model and a fresh record of the notes it wrote. */
function noteAgent(dir: string, script: readonly string[] = SCRIPT): NoteAgent {
  const notes: string[] = [];
  const note: ToolSpec = {
    name: 'note',
    description: 'Write a note (a side effect that must not repeat).',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    replayPolicy: 'never',
    handler: (args) => {
      notes.push(String(args['text']));
      return Promise.resolve(`noted ${String(args['text'])}`);
    },
  };
  const tools = ToolRegistry.of([note]);
  const model = scriptedModel(script, { model: 'cli-control' });
  const agent = defineAgent({
    model,
    interpreter: jsonActionInterpreter(),
    store: new FileStore({ dir, onWarning: () => undefined }),
    events: { params: { sink: 'none' }, deliver: () => undefined },
    syntheticObservations: SYNTHETIC,
    defaults: defaultsFor(tools),
  });
  return { agent, model, notes };
}

const dirs = sharedTempDirs();
let dir = '';
let store: FileStore;
let sourceBytes: Buffer;

beforeAll(async () => {
  dir = await dirs.make('polyloop-cli-control-');
  store = new FileStore({ dir, onWarning: () => undefined });
  const first = noteAgent(dir);
  expect((await run(first.agent, { runId: 'src', goal: 'note a and b' })).stopReason).toBe('final_answer');
  expect(first.notes).toEqual(['a', 'b']);
  sourceBytes = await readFile(store.logPath('src'));
});

describe('polyloop fork', () => {
  it.each([
    [0, [0, 1, 2], ['a', 'b']],
    [1, [1, 2], ['b']],
    [2, [2], []],
  ])(
    'forks a finished run at step %i; resuming the fork asks the model from that step on and runs no earlier step again',
    async (step, callSeqs, notes) => {
      const newRunId = `fork-at-${step}`;
      const out = await polyloop('fork', dir, 'src', String(step), newRunId);
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(`forked run "src" at step ${step} into "${newRunId}"`);
      expect(out.stdout).toContain(`resume(agent, "${newRunId}")`);
      const again = noteAgent(dir);
      const result = await resume(again.agent, newRunId);
      expect(result).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'noted a and b', steps: 3 });
      expect(again.model.calls.map((c) => c.callSeq)).toEqual(callSeqs);
      expect(again.notes).toEqual(notes);
      expect(await readFile(store.logPath('src'))).toEqual(sourceBytes);
    },
  );

  it('forks a run at the approval it awaits: the fork awaits the same request', async () => {
    const approvals = approvalAgent(dir);
    expect((await run(approvals, { runId: 'approving', goal: 'note c' })).stopReason).toBe('awaiting_input');
    const out = await polyloop('fork', dir, 'approving', '0', 'approving-fork');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('awaiting input at step 0: approval of note');
  });

  it('refuses a step past the run’s last (exit 2), writing nothing', async () => {
    const out = await inProcess('fork', dir, 'src', '3', 'past-the-end');
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('cannot be forked at step 3');
    expect(existsSync(store.logPath('past-the-end'))).toBe(false);
  });

  it('refuses a new run id that already has a log (exit 1) or is the source’s own (exit 2), leaving both logs as they were', async () => {
    const before = await readFile(store.logPath('src'));
    const out = await inProcess('fork', dir, 'src', '1', 'src');
    expect(out.code).toBe(2); // the same run in the same directory: an argument error
    expect(out.stderr).toContain('must differ');
    await inProcess('fork', dir, 'src', '1', 'taken');
    const taken = await readFile(store.logPath('taken'));
    const again = await inProcess('fork', dir, 'src', '2', 'taken');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('run "taken" already has a log');
    expect(await readFile(store.logPath('taken'))).toEqual(taken);
    expect(await readFile(store.logPath('src'))).toEqual(before);
  });

  it('refuses an unknown run (exit 1) and a step that is not a step number (exit 2)', async () => {
    const unknown = await inProcess('fork', dir, 'nope', '0', 'x');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no run "nope"');
    for (const step of ['1.5', 'two', '']) {
      const bad = await inProcess('fork', dir, 'src', step, 'x');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('must be a step number');
    }
    const arity = await inProcess('fork', dir, 'src', '1');
    expect(arity.code).toBe(2);
    expect(arity.stderr).toContain('polyloop fork <dir> <runId> <step> <newRunId>');
    expect(existsSync(store.logPath('x'))).toBe(false);
  });
});

describe('polyloop stop', () => {
  it('says an ended run has nothing to stop, and writes no stop file', async () => {
    const out = await inProcess('stop', dir, 'src', 'late');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('has already ended (final_answer): nothing to stop');
    expect(existsSync(store.stopPath('src'))).toBe(false);
  });

  it('refuses an unknown run and a missing directory (exit 1), writing nothing', async () => {
    const unknown = await inProcess('stop', dir, 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no run "nope"');
    expect(existsSync(store.stopPath('nope'))).toBe(false);
    const missing = await inProcess('stop', `${dir}/missing`, 'src');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such directory');
  });

  it('refuses a reason over 2,000 characters and wrong arguments (exit 2), writing nothing', async () => {
    await run(approvalAgent(dir), { runId: 'waiting', goal: 'note c' });
    const long = await inProcess('stop', dir, 'waiting', 'x'.repeat(2_001));
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('longer than 2000 characters');
    expect(existsSync(store.stopPath('waiting'))).toBe(false);
    const arity = await inProcess('stop', dir, 'waiting', 'the', 'customer');
    expect(arity.code).toBe(2);
    expect(arity.stderr).toContain('polyloop stop <dir> <runId> [reason]');
    const json = await inProcess('stop', dir, 'waiting', '--json');
    expect(json.code).toBe(2);
    expect(existsSync(store.stopPath('waiting'))).toBe(false);
  });

  it('asks a run no process drives to stop, and says its next resume ends it', async () => {
    await run(approvalAgent(dir), { runId: 'idle', goal: 'note c' });
    const out = await polyloop('stop', dir, 'idle');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('asked run "idle" to stop; no process drives it now');
    expect(existsSync(store.stopPath('idle'))).toBe(true);
  });

  it('is in the help text, with fork', async () => {
    const help = await inProcess('help');
    expect(help.stdout).toContain('polyloop stop <dir> <runId> [reason]');
    expect(help.stdout).toContain('polyloop fork <dir> <runId> <step> <newRunId>');
  });
});

/** An agent whose one note needs a person's approval: its runs wait at step 0. */
function approvalAgent(dir: string): AgentDefinition {
  const note: ToolSpec = {
    name: 'note',
    description: 'Write a note a person approves first.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    replayPolicy: 'never',
    needsApproval: true,
    handler: () => Promise.resolve('noted'),
  };
  const tools = ToolRegistry.of([note]);
  return defineAgent({
    model: scriptedModel(['{"tool":"note","args":{"text":"c"}}', '{"final":"done"}'], { model: 'cli-approval' }),
    interpreter: jsonActionInterpreter(),
    store: new FileStore({ dir, onWarning: () => undefined }),
    events: { params: { sink: 'none' }, deliver: () => undefined },
    syntheticObservations: SYNTHETIC,
    defaults: defaultsFor(tools),
  });
}
