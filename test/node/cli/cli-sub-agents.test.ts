/**
 * `polyloop runs` / `show` on a parent run and its sub-agent run (the family of
 * test/node/subagents/family.ts on a FileStore): children listed under their parent, the
 * parent's children named, and a pending `child` request shown as what is really asked, in which run.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { resume, run } from '../../../src/core/index.ts';
import { runCli } from '../../../src/cli/cli.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { family } from '../subagents/family.ts';

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(argv, { out: (t) => void (out += t), err: (t) => void (out += t) });
  return { code, out };
}

const dirs = sharedTempDirs();
let dir = '';

beforeAll(async () => {
  dir = await dirs.make();
  const store = new FileStore({ dir, onWarning: () => undefined });
  const waiting = family({ store });
  await run(waiting.parent, { runId: 'p1', goal: 'find it' });
  const done = family({ store });
  await run(done.parent, { runId: 'p2', goal: 'find it' });
  await resume(done.parent, 'p2', { input: { kind: 'approve', resultId: 's0.c0' } });
});

describe('polyloop show on a parent run', () => {
  it('shows the pending child request as the approval it really is, in the sub-agent run that asks it', async () => {
    const { code, out } = await cli('show', dir, 'p1');
    expect(code).toBe(0);
    expect(out).toMatch(
      /state +awaiting input at step 0: approval of note\(\{"text":"found it"\}\) in sub-agent run p1\.s0\.action \(s0\.c0; replies approve, deny, cancel\)/,
    );
    expect(out).toMatch(/pending +approval at step 0 of sub-agent run p1\.s0\.action \(reply to s0\.c0\)/);
    expect(out).toMatch(/action +note\n/);
    expect(out).toMatch(/arguments +\{"text":"found it"\}/);
    expect(out).toMatch(
      /#0 +awaiting approval of note\(\{"text":"found it"\}\) in sub-agent run p1\.s0\.action +\(s0\.c0\)/,
    );
    expect(out).toContain('── children: p1.s0.action (step 0, awaiting input)');
  });

  it('names the finished child and the step that ran it', async () => {
    const { out } = await cli('show', dir, 'p2');
    expect(out).toContain('── children: p2.s0.action (step 0, finished)');
    expect(out).toMatch(/#0 +action +research\(.*\n +observation: the answer is 42\n +sub-agent run: p2\.s0\.action/);
  });

  it('names the parent of a sub-agent run, and the request of the parent a reply names', async () => {
    const { out } = await cli('show', dir, 'p2.s0.action');
    expect(out).toMatch(/parent +p2 \(sub-agent run of its step s0\.action\)/);
    expect(out).not.toContain('waits on this request');
    const waiting = await cli('show', dir, 'p1.s0.action');
    expect(waiting.out).toMatch(
      /note +run p1 waits on this request: reply to its request s0\.c0 \(it carries the reply here\)/,
    );
  });

  it('gives the children and what a child request really asks in --json', async () => {
    const { out } = await cli('show', dir, 'p1', '--json');
    const json = JSON.parse(out) as Record<string, unknown>;
    expect(json['children']).toEqual([
      { runId: 'p1.s0.action', stepIndex: 0, resultId: 's0.action', state: 'awaiting_input' },
    ]);
    const pending = json['pending'] as Record<string, unknown>;
    expect(pending['resultId']).toBe('s0.c0');
    expect(pending['acceptedReplies']).toEqual(['approve', 'deny', 'cancel']);
    expect(pending['asked']).toMatchObject({
      runId: 'p1.s0.action',
      resultId: 's0.input',
      kind: 'approval',
      action: { kind: 'tool_call', name: 'note', arguments: { text: 'found it' } },
    });
    expect(json['parentRunId']).toBeNull();
  });
});

describe('polyloop runs with sub-agent runs', () => {
  it('lists each sub-agent run under its parent, marked', async () => {
    const { code, out } = await cli('runs', dir);
    expect(code).toBe(0);
    const ids = out
      .split('\n')
      .slice(1)
      .filter((l) => l !== '')
      .map((l) => l.split(/ {2,}/)[0]);
    expect(ids).toEqual(['p1', '└ p1.s0.action', 'p2', '└ p2.s0.action']);
  });

  it('gives each run its parent in --json', async () => {
    const { out } = await cli('runs', dir, '--json');
    const rows = JSON.parse(out) as Record<string, unknown>[];
    expect(rows.map((r) => [r['runId'], r['parentRunId']])).toEqual([
      ['p1', null],
      ['p1.s0.action', 'p1'],
      ['p2', null],
      ['p2.s0.action', 'p2'],
    ]);
  });
});
