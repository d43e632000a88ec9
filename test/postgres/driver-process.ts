/**
 * A payment driver process (test/postgres/payment-driver.ts) as a test holds it: start it, send
 * it runs, read its reports, stop, continue or kill it.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { DriverReport } from './payment-driver.ts';
import type { Honours } from './payments.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** A running driver process. */
export type DriverProcess = {
  readonly pid: number;
  /** Start a run in it. */
  drive(cmd: { readonly runId: string; readonly honours: Honours; readonly waitMs: number }): void;
  /** The next report (runs are reported in the order they settle). */
  next(): Promise<DriverReport>;
  signal(sig: 'SIGSTOP' | 'SIGCONT' | 'SIGKILL'): void;
  /** Kill it (SIGKILL, which also ends a stopped process) and wait for its exit. */
  kill(): Promise<void>;
};

/** Options of {@link startDriver}. */
export type DriverOptions = {
  readonly databaseUrl: string;
  readonly schema: string;
  readonly payUrl: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
};

/** Start a driver process. */
export function startDriver(opts: DriverOptions): DriverProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'test/postgres/payment-driver.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      SCHEMA: opts.schema,
      PAY_URL: opts.payUrl,
      LEASE_MS: String(opts.leaseMs),
      HEARTBEAT_MS: String(opts.heartbeatMs),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const reports: DriverReport[] = [];
  const waiting: Array<(r: DriverReport) => void> = [];
  let errors = '';
  let buffered = '';
  child.stderr?.on('data', (d: Buffer) => void (errors += d.toString()));
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString();
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const report = JSON.parse(buffered.slice(0, nl)) as DriverReport;
      buffered = buffered.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(report);
      else reports.push(report);
    }
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    pid: child.pid as number,
    drive: (cmd) => void child.stdin?.write(`${JSON.stringify(cmd)}\n`),
    next: () => {
      const ready = reports.shift();
      if (ready) return Promise.resolve(ready);
      return Promise.race([
        new Promise<DriverReport>((r) => waiting.push(r)),
        exited.then(() => Promise.reject(new Error(`the driver process exited: ${errors}`))),
      ]);
    },
    signal: (sig) => void process.kill(child.pid as number, sig),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
