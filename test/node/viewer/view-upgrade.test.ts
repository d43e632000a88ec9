/**
 * The viewer with an agent module that exports the agent itself: replies resume a run by its id
 * (the request comes from the log), a run whose code changed is refused with the mismatch, and
 * the page can upgrade it with a reason — `resume(agent, runId, { upgrade: { reason }, input })`.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunLog, decodeLog, run } from '../../../src/core/index.ts';
import type { AgentDefinition, RunLogView } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { loadAgentModule, startViewer, ViewerRefusedError } from '../../../src/viewer/server/viewer.ts';
import type { RunningViewer } from '../../../src/viewer/server/viewer.ts';
import { dirSource } from '../../../src/viewer/server/view-dir.ts';
import { sharedTempDirs, tempDir } from '../../support/temp-dir.ts';
import { agentVersions, SENT_V } from './upgrade-agents.ts';

let dir: string;
let pageDir: string;
let agents: ReturnType<typeof agentVersions>;
let v1View: RunningViewer;
let v2View: RunningViewer;
let v3View: RunningViewer;

type ErrorBody = { error: { code: string; message: string } };
const post = (v: RunningViewer, runId: string, route: 'input' | 'upgrade', body: unknown): Promise<Response> =>
  fetch(`${v.origin}/runs/${encodeURIComponent(runId)}/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${v.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const get = async <T>(v: RunningViewer, path: string): Promise<T> =>
  (await (await fetch(`${v.origin}${path}`, { headers: { authorization: `Bearer ${v.key}` } })).json()) as T;
const approve = { kind: 'approve', resultId: 's1.input' } as const;
const logText = (runId: string): Promise<string> => readFile(new FileStore({ dir }).logPath(runId), 'utf8');
const viewOf = async (runId: string): Promise<RunLogView> => readRunLog(decodeLog(await logText(runId)).records);
const viewerOf = async (agent: AgentDefinition): Promise<RunningViewer> =>
  startViewer({ source: await dirSource({ dir, agent, pollMs: 20 }), pageDir });

/** Start `runId` under v1: it stops at step 1, waiting for approval of `send`. */
async function waiting(runId: string): Promise<void> {
  const result = await run(agents.v1, { runId, goal: 'Tell Ana the weather in Oslo.' });
  expect(result.pending?.resultId).toBe('s1.input');
}

async function until(runId: string, state: string): Promise<RunLogView> {
  for (let i = 0; i < 200; i++) {
    const view = await viewOf(runId);
    if (view.state === state) return view;
    await new Promise((ok) => setTimeout(ok, 25));
  }
  throw new Error(`run ${runId} never reached ${state}`);
}

const dirs = sharedTempDirs();

beforeAll(async () => {
  dir = await dirs.make('polyloop-viewer-upgrade-');
  pageDir = await dirs.make('polyloop-viewer-page-');
  await mkdir(join(pageDir, 'assets'));
  await writeFile(join(pageDir, 'index.html'), '<!doctype html><title>viewer</title>');
  agents = agentVersions(dir);
  v1View = await viewerOf(agents.v1);
  v2View = await viewerOf(agents.v2);
  v3View = await viewerOf(agents.v3);
});

afterAll(async () => {
  for (const v of [v1View, v2View, v3View]) await v?.close();
});

describe('an agent module that exports the agent', () => {
  it('answers an approval with the request rebuilt from the log (resume by run id), and the run ends', async () => {
    await waiting('same-1');
    const res = await post(v1View, 'same-1', 'input', { kind: 'approve', resultId: 's1.input' });
    expect(res.status).toBe(202);
    expect((await until('same-1', 'ended')).ended?.stopReason).toBe('final_answer');
    expect(SENT_V.filter((s) => s.runId === 'same-1')).toEqual([{ runId: 'same-1', to: 'ana@example.com' }]);
  });

  it('loads from a module that exports it (default or `agent`), and a module exporting neither is refused with what to export', async () => {
    const fixture = JSON.stringify(join(import.meta.dirname, 'upgrade-agents.ts'));
    const modules = join(dir, '..', `${dir.split('/').at(-1)}-modules`);
    await mkdir(modules, { recursive: true });
    const v1 = `agentVersions(${JSON.stringify(dir)}).v1`;
    const imports = `import { agentVersions } from ${fixture};\n`;
    await writeFile(join(modules, 'agent.ts'), `${imports}export default ${v1};\n`);
    await writeFile(join(modules, 'named.mts'), `${imports}export const agent = ${v1};\n`);
    await writeFile(join(modules, 'neither.mjs'), 'export default { model: null };\n');
    try {
      for (const file of ['agent.ts', 'named.mts']) {
        const loaded = await loadAgentModule(join(modules, file));
        expect(typeof loaded === 'object' && 'params' in loaded && 'defaults' in loaded).toBe(true);
        await waiting(`module-${file}`);
        const v = await viewerOf(loaded as AgentDefinition);
        try {
          const deny = { kind: 'deny', resultId: 's1.input', reason: 'not now' };
          const res = await post(v, `module-${file}`, 'input', deny);
          expect(res.status, await res.clone().text()).toBe(202);
          await until(`module-${file}`, 'ended');
        } finally {
          await v.close();
        }
      }
      const neither = loadAgentModule(join(modules, 'neither.mjs'));
      await expect(neither).rejects.toThrow(/must export the agent: export default defineAgent\(/);
    } finally {
      await rm(modules, { recursive: true, force: true });
    }
  }, 30_000);

  it('is refused at start without the tools and executor a resume by id needs, or with a store in another directory', async () => {
    await expect(dirSource({ dir, agent: agents.bare })).rejects.toThrow(/defaults\.tools or defaults\.executor/);
    await expect(dirSource({ dir, agent: agents.bare })).rejects.toBeInstanceOf(ViewerRefusedError);
    const there = agentVersions(await tempDir('polyloop-viewer-elsewhere-')).v1;
    const refused = dirSource({ dir, agent: there });
    await expect(refused).rejects.toThrow(/store writes .* not .*the directory this viewer shows/);
  });
});

describe('a run whose code changed', () => {
  it('refuses a reply with the mismatch (400, code run_identity_mismatch, naming the keys) and writes nothing', async () => {
    await waiting('changed-1');
    const before = await logText('changed-1');
    const res = await post(v2View, 'changed-1', 'input', { kind: 'approve', resultId: 's1.input' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('run_identity_mismatch');
    expect(body.error.message).toMatch(/your agent module does not fit this run: .*differing keys: .*tools/);
    expect(await logText('changed-1')).toBe(before);
  });

  it('is upgraded with a reason and the reply: 202, the upgrade record before the reply, the run ends under the new tools', async () => {
    await waiting('changed-2');
    const res = await post(v2View, 'changed-2', 'upgrade', { reason: 'deploy 42: search added', input: approve });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId: 'changed-2', upgraded: true, resultId: 's1.input' });
    const view = await until('changed-2', 'ended');
    expect(view.upgrades).toHaveLength(1);
    expect(view.upgrades[0]).toMatchObject({ stepIndex: 1, reason: 'deploy 42: search added' });
    expect(Object.keys(view.upgrades[0]?.changes ?? {})).toEqual(['context', 'tools']);
    const kinds = decodeLog(await logText('changed-2')).records.map((r) => r.kind);
    expect(kinds.indexOf('upgrade')).toBeLessThan(kinds.indexOf('input'));
    expect(SENT_V.filter((s) => s.runId === 'changed-2')).toHaveLength(1);
  });

  it('carries its upgrades in the run JSON: step, reason, changed keys, tools added and removed, time', async () => {
    const summary = await get<{ upgrades: unknown[] }>(v2View, '/runs/changed-2');
    const [u] = (await viewOf('changed-2')).upgrades;
    const tools = { added: ['search'], removed: [] };
    const changed = ['context', 'tools'];
    const reason = 'deploy 42: search added';
    const snapshotHash = u?.snapshotHash;
    expect(summary.upgrades).toEqual([{ stepIndex: 1, reason, at: u?.at, changed, tools, snapshotHash }]);
    const plain = await get<{ upgrades: unknown[] }>(v2View, '/runs/same-1');
    expect(plain.upgrades).toEqual([]);
  });

  it('is upgraded without a reply: the record is written and the run still waits; a second upgrade has nothing to do (409)', async () => {
    await waiting('changed-3');
    const res = await post(v2View, 'changed-3', 'upgrade', { reason: 'new tools' });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ runId: 'changed-3', upgraded: true });
    const view = await viewOf('changed-3');
    expect(view.state).toBe('awaiting_input');
    expect(view.upgrades.map((u) => u.reason)).toEqual(['new tools']);
    const again = await post(v2View, 'changed-3', 'upgrade', { reason: 'again' });
    expect(again.status).toBe(409);
    expect(((await again.json()) as ErrorBody).error.message).toMatch(/nothing to upgrade/);
    // Under the new identity the reply is an ordinary one.
    expect((await post(v2View, 'changed-3', 'input', { kind: 'approve', resultId: 's1.input' })).status).toBe(202);
    await until('changed-3', 'ended');
  });

  it('refuses an upgrade body with unknown keys, without a reason, or with a malformed reply (400), writing nothing', async () => {
    await waiting('changed-4');
    const before = await logText('changed-4');
    const malformedReply = { reason: 'x', input: { kind: 'approve' } };
    const bodies = [{ reason: 'x', force: true }, {}, { reason: '  ' }, { reason: 7 }, malformedReply, [], 'x'];
    for (const body of bodies) {
      const res = await post(v2View, 'changed-4', 'upgrade', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const unknown = await post(v2View, 'changed-4', 'upgrade', { reason: 'x', force: true });
    expect(((await unknown.json()) as ErrorBody).error.message).toMatch(/force/);
    expect(await logText('changed-4')).toBe(before);
  });

  it('answers UpgradeRefusedError as a 409 with its words (the new tools drop the tool the open request names), writing nothing', async () => {
    await waiting('changed-5');
    const before = await logText('changed-5');
    const res = await post(v3View, 'changed-5', 'upgrade', { reason: 'send retired', input: approve });
    expect(res.status).toBe(409);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('upgrade_refused');
    expect(body.error.message).toMatch(/cannot be upgraded: it removes tool "send"/);
    expect(await logText('changed-5')).toBe(before);
  });

  it('never upgrades an ended run, nor one that waits for no person (409); an unknown run is a 404', async () => {
    const ended = await post(v2View, 'same-1', 'upgrade', { reason: 'late' });
    expect(ended.status).toBe(409);
    expect(((await ended.json()) as ErrorBody).error.message).toMatch(/ended/);
    // A crash while step 0's lookup ran: interrupted, no person asked.
    await waiting('cut-1');
    const lines = (await logText('cut-1')).split('\n');
    const cut = lines.findIndex((l) => l.includes('"kind":"intent"') && l.includes('"intent":"action"'));
    await writeFile(
      new FileStore({ dir }).logPath('cut-1'),
      lines
        .slice(0, cut + 1)
        .map((l) => `${l}\n`)
        .join(''),
    );
    const interrupted = await post(v2View, 'cut-1', 'upgrade', { reason: 'x' });
    expect(interrupted.status).toBe(409);
    expect(((await interrupted.json()) as ErrorBody).error.message).toMatch(/waits for no person/);
    expect((await viewOf('cut-1')).upgrades).toEqual([]);
    expect((await post(v2View, 'no-such-run', 'upgrade', { reason: 'x' })).status).toBe(404);
  });

  it('without an agent the viewer upgrades nothing and says why', async () => {
    const readOnly = await startViewer({ source: await dirSource({ dir }), pageDir });
    try {
      const res = await post(readOnly, 'changed-4', 'upgrade', { reason: 'x' });
      expect(res.status).toBe(409);
      expect(((await res.json()) as ErrorBody).error.message).toMatch(/--agent/);
    } finally {
      await readOnly.close();
    }
  });
});
