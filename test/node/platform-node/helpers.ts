/** Helpers for the Node platform tests: real child processes (temp dirs: test/support/temp-dir.ts). */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';

/** Start a TypeScript file in a real Node process (`node --import tsx`: the pid is the program's own). */
export function spawnTs(
  file: string,
  args: readonly string[],
  opts: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', file, ...args], {
    cwd: opts.cwd ?? process.cwd(),
    env: opts.env ?? process.env,
    stdio: 'pipe',
  });
}

/** Resolves with the first stdout line matching `re` (rejects if the child exits first). */
export function waitForLine(child: ChildProcessWithoutNullStreams, re: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let err = '';
    const onData = (chunk: Buffer): void => {
      buf += chunk.toString('utf8');
      for (const line of buf.split('\n')) {
        if (re.test(line)) {
          child.stdout.off('data', onData);
          resolve(line);
          return;
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    // 'close', not 'exit': 'exit' can come before the last stdout chunk has been read.
    child.once('close', (code, signal) =>
      reject(new Error(`child exited (${code ?? signal}) before printing ${re}; stdout: ${buf} stderr: ${err}`)),
    );
  });
}

/** Resolves with the exit code/signal of a child, and everything it printed. Call it before the child can exit. */
export function finished(child: ChildProcessWithoutNullStreams): Promise<{
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

const BIN = join(import.meta.dirname, '../../../bin/polyloop.mjs');

/** Run the real `polyloop` launcher in a child process, `stdin` piped in when given. */
export function polyloop(
  args: readonly string[],
  opts: { readonly stdin?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}
