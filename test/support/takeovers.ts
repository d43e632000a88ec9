/**
 * A run four drivers carried out, each a real process on the same FileStore directory
 * (./takeover-agent.ts): the first is killed with SIGKILL inside the action of step 1, the second
 * inside the action of step 2, the third once step 3's record landed, and the fourth ends the run.
 * Each later driver marks where it took the run over: step 1 and step 2 in flight
 * (`replay_action`), step 4 at a step boundary.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const AGENT = resolve(import.meta.dirname, 'takeover-agent.ts');

type Exit = { readonly code: number | null; readonly signal: string | null; readonly stdout: string };

function driver(dir: string, runId: string, kill: string | null): Promise<Exit> {
  return new Promise((done, fail) => {
    const env = { ...process.env };
    delete env['TAKEOVER_KILL'];
    if (kill !== null) env['TAKEOVER_KILL'] = kill;
    const child = spawn(process.execPath, ['--import', 'tsx', AGENT, dir, runId], { env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code, signal) =>
      signal === null && code !== 0
        ? fail(new Error(`driver failed (${code}): ${stderr}`))
        : done({ code, signal, stdout }),
    );
  });
}

/** Drive `runId` in `dir` through the four drivers; resolves once the last one ended the run. */
export async function takenOverRun(dir: string, runId: string): Promise<void> {
  for (const kill of ['action:1', 'action:2', 'step:3']) {
    const exit = await driver(dir, runId, kill);
    if (exit.signal !== 'SIGKILL') throw new Error(`the driver meant to die at ${kill} did not: ${exit.stdout}`);
  }
  const last = await driver(dir, runId, null);
  if (!last.stdout.includes('RESULT final_answer'))
    throw new Error(`the last driver did not end the run: ${last.stdout}`);
}
