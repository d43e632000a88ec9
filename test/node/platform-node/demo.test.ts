import { readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countExports } from '../../../examples/demo/policy.ts';
import { readRunLog, RECORD_VERSION } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { finished, polyloop, spawnTs } from './helpers.ts';
import { tempDir } from '../../support/temp-dir.ts';

const MAIN = resolve(import.meta.dirname, '../../../examples/demo/main.ts');

describe('demo policy', () => {
  it.each([
    ['export function f() {}\nexport const a = 1, b = 2;', 2],
    ['export { a, b as c, type D } from "./x.ts";\nexport type { E,\n  F,\n} from "./y.ts";', 5],
    [
      'export class A {}\nexport interface B {}\nexport type C = 1;\nexport enum D { x }\nexport async function e() {}',
      5,
    ],
    ['// export const commented = 1;\n/* export function hidden() {} */\nconst local = 1;', 0],
    ['export default function main() {}\nexport abstract class Base {}', 2],
  ])('counts the exported names of %j as %i', (source, n) => {
    expect(countExports(source)).toBe(n);
  });
});

describe('npm run demo', () => {
  it('is SIGKILLed after step 3 with --crash-after 3, and --resume finishes the same run with the answer', async () => {
    const dir = await tempDir('polyloop-demo-');
    const env = { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
    const crashed = await finished(spawnTs(MAIN, ['--dir', dir, '--crash-after', '3'], { env }));
    expect(crashed.signal).toBe('SIGKILL');
    expect(crashed.stdout).toMatch(/^#0 +list_dir\(\{"path":"src"\}\)/m);
    expect(crashed.stdout).toMatch(/^#2 /m);
    expect(crashed.stdout).not.toMatch(/^#3 /m);
    const resumed = await finished(spawnTs(MAIN, ['--dir', dir, '--resume'], { env }));
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('run demo: resumed at step 3');
    expect(resumed.stdout).toMatch(/^#3 /m);
    expect(resumed.stdout).toMatch(/run demo: ended \(final_answer\) after \d+ steps/);
    expect(resumed.stdout).toMatch(/^answer: src\/\S+\.ts exports the most names: \d+\./m);
    // src/zod holds one module: its listing reads "1 entry", and no count reads "1 <plural>".
    const printed = crashed.stdout + resumed.stdout;
    expect(printed).toMatch(/list_dir\(\{"path":"src\/zod"\}\) +→ 1 entry$/m);
    expect(printed).not.toMatch(/\b1 (entries|exported names|chars|steps|valid actions)\b/);
  }, 120_000);

  it.each([
    [['--crash-after', 'abc'], '--crash-after takes a whole number of steps (1 or more); got "abc"'],
    [['--crash-after', '0'], '--crash-after takes a whole number of steps (1 or more); got "0"'],
    [['--crash-after'], '--crash-after needs a number of steps'],
    [['--input', 'maybe'], '--input takes approve, deny, cancel; got "maybe"'],
    [['--dir'], '--dir needs a directory'],
    [['--colour'], 'unknown option "--colour"'],
  ])(
    'refuses %j with exit 2, saying what is wrong and how to call it',
    async (args, message) => {
      const r = await finished(
        spawnTs(MAIN, args, { env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } }),
      );
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `demo: ${message}\nusage: npm run demo -- [--crash-after N] [--resume] [--dir DIR] [--local] [--approve] [--input approve|deny|cancel [--reason TEXT]]\n`,
      );
    },
    60_000,
  );

  it('prints its usage and exits 0 with --help', async () => {
    const r = await finished(spawnTs(MAIN, ['--help']));
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^usage: npm run demo -- \[--crash-after N\]/);
  }, 60_000);

  it('explains how to start when there is nothing to resume, and exits 1', async () => {
    const dir = await tempDir('polyloop-demo-');
    const r = await finished(
      spawnTs(MAIN, ['--dir', dir, '--resume'], { env: { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } }),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('there is no demo run to resume yet; start one with: npm run demo');
  }, 60_000);
});

describe('npm run demo -- --approve', () => {
  const env = { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };

  async function stopAtApproval(): Promise<{ dir: string; stdout: string }> {
    const dir = await tempDir('polyloop-demo-');
    const first = await finished(spawnTs(MAIN, ['--dir', dir, '--approve'], { env }));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    return { dir, stdout: first.stdout };
  }

  it('stops at the approval of write_report, printing the request and the exact commands that answer it; a second process approves and the run finishes with the report written', async () => {
    const { dir, stdout } = await stopAtApproval();
    expect(stdout).toMatch(
      /⏸ {2}run demo-approve awaits approval at step \d+ \(s\d+\.input; replies approve, deny, cancel\):/,
    );
    expect(stdout).toMatch(/^ +write_report\(\{"text":"src\/\S+\.ts exports the most names: \d+\./m);
    expect(stdout).toContain(`npm run demo -- --dir ${JSON.stringify(dir)} --input approve`);
    expect(stdout).toContain(`npm run demo -- --dir ${JSON.stringify(dir)} --input deny --reason "not now"`);
    expect(stdout).not.toContain('run demo-approve: ended');
    await expect(stat(join(dir, 'demo-report.md'))).rejects.toMatchObject({ code: 'ENOENT' });
    const listed = await polyloop(['runs', dir]);
    expect(listed.stdout).toMatch(/demo-approve\s+awaiting input at step \d+: approval of write_report/);

    // A resume without input changes nothing: the run still waits.
    const idle = await finished(spawnTs(MAIN, ['--dir', dir, '--resume', '--approve'], { env }));
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain('awaits approval');

    const approved = await finished(spawnTs(MAIN, ['--dir', dir, '--input', 'approve'], { env }));
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/reply approve to s\d+\.input written; carrying it out/);
    expect(approved.stdout).toMatch(/write_report\(.*→ wrote \d+ chars to /);
    expect(approved.stdout).toMatch(/run demo-approve: ended \(final_answer\)/);
    const report = await readFile(join(dir, 'demo-report.md'), 'utf8');
    expect(report).toMatch(/^src\/\S+\.ts exports the most names: \d+\./);
    expect(approved.stdout).toContain(`answer: ${report.trim()}`);
  }, 180_000);

  it("--input deny --reason finishes the run without writing the report, the reason recorded as the step's observation", async () => {
    const { dir } = await stopAtApproval();
    const denied = await finished(
      spawnTs(MAIN, ['--dir', dir, '--input', 'deny', '--reason', 'Not in this repo.'], { env }),
    );
    expect(denied.stderr).toBe('');
    expect(denied.code).toBe(0);
    expect(denied.stdout).toMatch(/run demo-approve: ended \(final_answer\)/);
    await expect(stat(join(dir, 'demo-report.md'))).rejects.toMatchObject({ code: 'ENOENT' });
    const shown = await polyloop(['show', dir, 'demo-approve']);
    expect(shown.stdout).toMatch(/write_report\(.*\[denied\]\n +observation: Not in this repo\./);
    const again = await finished(spawnTs(MAIN, ['--dir', dir, '--input', 'approve'], { env }));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('awaits no input');
  }, 180_000);
});

describe('npm run demo --input on a run that awaits nothing', () => {
  const env = { ...process.env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };

  it('after a reply landed but was not carried out (the answering process died), says so and gives the resume command, never the fresh start that would throw the reply away', async () => {
    const dir = await tempDir('polyloop-demo-');
    const first = await finished(spawnTs(MAIN, ['--dir', dir, '--approve'], { env }));
    expect(first.code).toBe(0);
    // What an `--input approve` process killed right after its input barrier leaves behind.
    const store = new FileStore({ dir, onWarning: () => undefined });
    const pending = readRunLog(await store.readLog('demo-approve')).pending;
    expect(pending).not.toBeNull();
    const resultId = pending?.resultId ?? '';
    await store.input('demo-approve', {
      kind: 'input',
      v: RECORD_VERSION,
      stepIndex: pending?.stepIndex ?? 0,
      resultId,
      reply: { kind: 'approve', resultId },
      receivedAt: new Date().toISOString(),
    });

    const again = await finished(spawnTs(MAIN, ['--dir', dir, '--input', 'approve'], { env }));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('awaits no input');
    expect(again.stderr).toContain('a reply (approve) already landed');
    expect(again.stderr).toContain(`npm run demo -- --dir ${JSON.stringify(dir)} --resume --approve`);
    expect(again.stderr).not.toMatch(/start one with/);

    const carried = await finished(spawnTs(MAIN, ['--dir', dir, '--resume', '--approve'], { env }));
    expect(carried.code).toBe(0);
    expect(carried.stdout).toMatch(/run demo-approve: ended \(final_answer\)/);
    const ended = await finished(spawnTs(MAIN, ['--dir', dir, '--input', 'approve'], { env }));
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain('it has ended (final_answer)');
  }, 180_000);
});

describe('npm run demo on an OpenAI-compatible endpoint', () => {
  it('drives the same tools through native tool calls when OPENAI_BASE_URL is set', async () => {
    const bodies: Array<{ model: string; tools?: unknown[]; messages: Array<{ role: string; content?: unknown }> }> =
      [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        const body = JSON.parse(raw) as (typeof bodies)[number];
        bodies.push(body);
        const answered = body.messages.some((m) => m.role === 'tool');
        const message = answered
          ? { role: 'assistant', content: 'src/core/index.ts (from the fake model)' }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'list_dir', arguments: '{"path":"src"}' } },
              ],
            };
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: `chatcmpl-${bodies.length}`,
            object: 'chat.completion',
            choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const dir = await tempDir('polyloop-demo-');
      const port = (server.address() as AddressInfo).port;
      const env = {
        ...process.env,
        OPENAI_API_KEY: '',
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        OPENAI_MODEL: 'fake-model',
      };
      const r = await finished(spawnTs(MAIN, ['--dir', dir], { env }));
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('model: fake-model');
      expect(r.stdout).toMatch(/^#0 +list_dir\(\{"path":"src"\}\) +→ \d+ entries/m);
      expect(r.stdout).toContain('answer: src/core/index.ts (from the fake model)');
      expect(bodies).toHaveLength(2);
      expect(bodies[0]?.model).toBe('fake-model');
      expect(bodies[0]?.tools).toHaveLength(2);
      expect(bodies[1]?.messages.find((m) => m.role === 'tool')?.content).toContain('core/');
    } finally {
      server.close();
    }
  }, 60_000);
});
