/**
 * The run viewer where it is easiest to break: two people replying to one request at once. (Two
 * viewers in one browser, whose cookies ignore the port: the key is not in a cookie at all,
 * see view-key.test.ts.)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReleaseLease } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { startViewer } from '../../../src/viewer/server/viewer.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import type { AgentFactory } from '../../../src/viewer/server/view-dir.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import agentFor, { build } from './agent.ts';
import { runIn } from './runs.ts';

let dir: string;
let pageDir: string;

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-hard-');
  pageDir = await dirs.make('polyloop-viewer-page-');
  await mkdir(join(pageDir, 'assets'));
  await writeFile(join(pageDir, 'index.html'), '<!doctype html><title>viewer</title>');
});

const inputLines = async (runId: string): Promise<string[]> =>
  (await readFile(new FileStore({ dir }).logPath(runId), 'utf8'))
    .split('\n')
    .filter((l) => l.includes('"kind":"input"'));

/** A FileStore whose lease is taken only once `ready` resolves: a driver that reaches the lock late. */
class LateLockStore extends FileStore {
  constructor(
    dir: string,
    private readonly ready: () => Promise<void>,
    private readonly entered: () => void,
  ) {
    super({ dir });
  }
  override async acquire(runId: string, opts: { readonly signal?: AbortSignal } = {}): Promise<ReleaseLease> {
    this.entered();
    await this.ready();
    return super.acquire(runId, opts);
  }
}

describe('two replies to one request at once', () => {
  it('answers 202 only to the reply that landed; the other is refused, though the first landed while it waited', async () => {
    const runId = 'approve-race';
    await runIn(dir, runId);
    let calls = 0;
    let denyAtLock!: () => void;
    const denyWaiting = new Promise<void>((ok) => (denyAtLock = ok));
    // The deny is sent first but reaches the run's lock only after the approval is in the log.
    const approveLanded = async (): Promise<void> => {
      while ((await inputLines(runId)).length === 0) await new Promise((ok) => setTimeout(ok, 10));
    };
    const factory: AgentFactory = (ctx) =>
      calls++ === 0 ? build(ctx.runId, new LateLockStore(ctx.dir, approveLanded, denyAtLock)) : agentFor(ctx);
    const viewer = await startViewer({
      source: await dirSource({ dir, agent: factory, pollMs: 20, log: () => undefined }),
      pageDir,
    });
    try {
      const post = (body: unknown): Promise<Response> =>
        fetch(`${viewer.origin}/runs/${runId}/input`, {
          method: 'POST',
          headers: { authorization: `Bearer ${viewer.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const deny = post({ kind: 'deny', resultId: 's0.input', reason: 'not to Ana' });
      await denyWaiting;
      const approve = await post({ kind: 'approve', resultId: 's0.input' });
      const denied = await deny;
      expect(approve.status).toBe(202);
      expect(denied.status).toBe(409);
      const lines = await inputLines(runId);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('"kind":"approve"');
    } finally {
      await viewer.close();
    }
  }, 20_000);
});
