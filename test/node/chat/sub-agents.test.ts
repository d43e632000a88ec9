/**
 * A chat turn whose tool runs a sub-agent (`agentTool`): what the child asks shows on the parent's
 * tool part — an approval as the AI SDK's approval request (naming the child's action in
 * `approval.descriptor`), an answer as the part a person fills, a settlement as the settle part —
 * and the page's reply reaches the child through the parent's request, across a restart too.
 */
import { DefaultChatTransport, validateUIMessages } from 'ai';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { chatHandler, loadChat } from '../../../src/chat/index.ts';
import type { ChatTurn } from '../../../src/chat/index.ts';
import { replyOfParts } from '../../../src/chat/replies.ts';
import { TurnChunks } from '../../../src/chat/turn-chunks.ts';
import { agentTool, defineAgent, InMemoryStore, readRunLog, ToolRegistry } from '../../../src/core/index.ts';
import type { AgentDefinition, InputRequest, LogRecord, RunRequest, RunStore } from '../../../src/core/index.ts';
import {
  collectingSink,
  jsonActionInterpreter,
  scriptedModel,
  SimulatedCrashError,
} from '../../../src/testing/index.ts';
import { interceptWrites } from '../../../src/testing/faulty-store.ts';
import { defaultsFor, family, SYNTHETIC } from '../subagents/family.ts';

const BUDGET = { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 };
import type { Family } from '../subagents/family.ts';
import { textOf, toolPart, UiChat } from './fixtures.ts';

/** The chat handler of turns that run `parent` on `store`. */
function familyHandler(parent: AgentDefinition, store: RunStore): (req: Request) => Promise<Response> {
  const request = ({ runId, goal, context }: ChatTurn): RunRequest =>
    ({ ...parent.defaults, runId, context: { run: context, goal } }) as RunRequest;
  return chatHandler({ agent: parent, store, request });
}

/** A chat whose turns run `parent` on `store`, through the real `DefaultChatTransport` before `chatHandler`. */
function familyChat(parent: AgentDefinition, store: RunStore): DefaultChatTransport<UIMessage> {
  const handle = familyHandler(parent, store);
  const fetch = (url: RequestInfo | URL, init?: RequestInit): Promise<Response> =>
    handle(new Request(String(url), init));
  return new DefaultChatTransport<UIMessage>({ api: 'http://chat.test/api/chat', fetch });
}

const chatOf = (f: Family): DefaultChatTransport<UIMessage> => familyChat(f.parent, f.store);

const NOTE = { kind: 'tool_call', name: 'note', arguments: { text: 'found it' } };

/** The action a sub-agent's approval names (`approval.descriptor.action`). */
const askedAction = (part: Record<string, unknown>): unknown =>
  (part['approval'] as { descriptor?: { action?: unknown } } | undefined)?.descriptor?.action;

describe("a sub-agent's request in a chat turn", () => {
  it("shows the child's approval on the parent's tool part, naming the child's action", async () => {
    const f = family();
    const ui = new UiChat({ id: 'sa1', transport: chatOf(f) });
    await ui.sendMessage({ text: 'find it' });
    expect(ui.status).toBe('ready');
    const asked = toolPart(ui.last);
    expect(asked).toMatchObject({
      type: 'tool-research',
      state: 'approval-requested',
      input: { question: 'what is it?' },
      approval: {
        id: 'chat:sa1:1:s0.c0',
        requestReason: 'The sub-agent run chat:sa1:1.s0.action asks to run note.',
        descriptor: { childRunId: 'chat:sa1:1.s0.action', askingRunId: 'chat:sa1:1.s0.action', kind: 'approval' },
      },
    });
    expect(askedAction(asked)).toMatchObject(NOTE);
    expect(f.notes).toEqual([]);
    expect((await loadChat(f.store, 'sa1'))[1]).toEqual(ui.last);
  });

  it("approving runs the child's tool once and the parent's part shows the child's final answer", async () => {
    const f = family();
    const ui = new UiChat({ id: 'sa2', transport: chatOf(f) });
    await ui.sendMessage({ text: 'find it' });
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: true });
    await ui.sendMessage();
    expect(ui.status).toBe('ready');
    expect(f.notes).toEqual(['found it']);
    expect(toolPart(ui.last)).toMatchObject({
      state: 'output-available',
      output: 'the answer is 42',
      approval: { id: 'chat:sa2:1:s0.c0', approved: true },
      resultProviderMetadata: { polyloop: { childRunId: 'chat:sa2:1.s0.action' } },
    });
    expect(ui.last.metadata).toMatchObject({ stopReason: 'final_answer' });
    const child = readRunLog(await f.store.readLog('chat:sa2:1.s0.action'));
    expect(child.ended?.stopReason).toBe('final_answer');
    const loaded = await loadChat(f.store, 'sa2');
    expect(loaded[1]).toEqual(ui.last);
    await expect(validateUIMessages({ messages: loaded })).resolves.toHaveLength(2);
  });

  it('denying reaches the child: its tool does not run, the part ends denied, the parent finishes', async () => {
    const f = family();
    const ui = new UiChat({ id: 'sa3', transport: chatOf(f) });
    await ui.sendMessage({ text: 'find it' });
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: false, reason: 'no' });
    await ui.sendMessage();
    expect(f.notes).toEqual([]);
    const childLog = await f.store.readLog('chat:sa3:1.s0.action');
    const input = childLog.find((r): r is Extract<LogRecord, { kind: 'input' }> => r.kind === 'input');
    expect(input?.reply).toEqual({ kind: 'deny', resultId: 's0.input', reason: 'no' });
    // The AI SDK allows no output after a refused approval: the part is denied, the model read the child's answer.
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-denied', approval: { approved: false, reason: 'no' } });
    const parent = readRunLog(await f.store.readLog('chat:sa3:1'));
    expect(parent.trajectory[0]?.observation).toBe('the answer is 42');
    expect(ui.last.metadata).toMatchObject({ stopReason: 'final_answer' });
    expect((await loadChat(f.store, 'sa3'))[1]).toEqual(ui.last);
    await expect(validateUIMessages({ messages: await loadChat(f.store, 'sa3') })).resolves.toHaveLength(2);
  });

  it('the approval survives a restart: a new server over the same store carries it to the child', async () => {
    const store = new InMemoryStore();
    const before = family({ store });
    const ui = new UiChat({ id: 'sa4', transport: chatOf(before) });
    await ui.sendMessage({ text: 'find it' });
    const after = family({ store });
    const messages = await loadChat(store, 'sa4');
    const reloaded = new UiChat({ id: 'sa4', transport: chatOf(after), messages });
    expect(await chatOf(after).reconnectToStream({ chatId: 'sa4' })).toBeNull();
    await reloaded.addToolApprovalResponse({ id: toolPart(reloaded.last).approval?.id ?? '', approved: true });
    await reloaded.sendMessage();
    expect(reloaded.status).toBe('ready');
    expect([...before.notes, ...after.notes]).toEqual(['found it']);
    expect(toolPart(reloaded.last)).toMatchObject({ state: 'output-available', output: 'the answer is 42' });
    expect(textOf(reloaded.last)).toContain('parent done');
    expect(readRunLog(await store.readLog('chat:sa4:1')).ended?.stopReason).toBe('final_answer');
    expect((await loadChat(store, 'sa4'))[1]).toEqual(reloaded.last);
  });

  it('a server that dies after taking the approval, before the child got it: the next one carries it on', async () => {
    const store = new InMemoryStore();
    // The parent wrote the approval; the process dies as it is written into the child's log.
    const dying = interceptWrites(store, async (method, runId, _records, write) => {
      if (method === 'input' && runId === 'chat:sa7:1.s0.action') throw new SimulatedCrashError('the server died');
      await write();
    });
    const before = family({ store: dying });
    const ui = new UiChat({ id: 'sa7', transport: chatOf(before) });
    await ui.sendMessage({ text: 'find it' });
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: true });
    await ui.sendMessage();
    expect(before.notes).toEqual([]);
    const parent = await store.readLog('chat:sa7:1');
    // The driver that took the reply marked where it took over, then the reply landed.
    expect(parent.map((r) => r.kind).slice(-3)).toEqual(['input_request', 'resumed', 'input']);
    const after = family({ store });
    const reloaded = new UiChat({ id: 'sa7', transport: chatOf(after), messages: await loadChat(store, 'sa7') });
    await reloaded.resumeStream();
    expect(reloaded.status).toBe('ready');
    expect(after.notes).toEqual(['found it']);
    expect(toolPart(reloaded.last)).toMatchObject({ state: 'output-available', output: 'the answer is 42' });
    expect(readRunLog(await store.readLog('chat:sa7:1')).ended?.stopReason).toBe('final_answer');
    expect((await loadChat(store, 'sa7'))[1]).toEqual(reloaded.last);
  });

  it("`{ id, runId, input }` answers the parent's request as the child's accepts; another kind is a 409", async () => {
    const f = family();
    const ui = new UiChat({ id: 'sa8', transport: chatOf(f) });
    await ui.sendMessage({ text: 'find it' });
    const handle = familyHandler(f.parent, f.store);
    const postInput = (input: unknown): Promise<Response> =>
      handle(
        new Request('http://chat.test/api/chat', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'sa8', runId: 'chat:sa8:1', input }),
        }),
      );
    const wrong = await postInput({ kind: 'answer', resultId: 's0.c0', text: 'yes' });
    expect(wrong.status).toBe(409);
    expect(await wrong.text()).toMatch(/an? approval request .*accepts approve, deny, cancel, not answer/);
    expect(readRunLog(await f.store.readLog('chat:sa8:1')).pending?.resultId).toBe('s0.c0');
    const right = await postInput({ kind: 'approve', resultId: 's0.c0' });
    expect(right.status).toBe(200);
    await right.text();
    expect(f.notes).toEqual(['found it']);
    expect(readRunLog(await f.store.readLog('chat:sa8:1')).ended?.stopReason).toBe('final_answer');
  });

  it('a second approval of the same child asks again on the same part, and each reply reaches the child', async () => {
    const twice = ['{"tool":"note","args":{"text":"one"}}', '{"tool":"note","args":{"text":"two"}}', '{"final":"2"}'];
    const f = family({ childScript: twice });
    const ui = new UiChat({ id: 'sa5', transport: chatOf(f) });
    await ui.sendMessage({ text: 'find it' });
    await ui.addToolApprovalResponse({ id: toolPart(ui.last).approval?.id ?? '', approved: true });
    await ui.sendMessage();
    expect(f.notes).toEqual(['one']);
    const again = toolPart(ui.last);
    expect(again).toMatchObject({ state: 'approval-requested', approval: { id: 'chat:sa5:1:s0.c1' } });
    expect(askedAction(again)).toMatchObject({
      arguments: { text: 'two' },
    });
    await ui.addToolApprovalResponse({ id: again.approval?.id ?? '', approved: true });
    await ui.sendMessage();
    expect(f.notes).toEqual(['one', 'two']);
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-available', output: '2' });
    expect((await loadChat(f.store, 'sa5'))[1]).toEqual(ui.last);
  });

  it("a child's question is the parent's tool part to fill: addToolOutput answers the child", async () => {
    const store = new InMemoryStore();
    const parent = askingFamily(store);
    const ui = new UiChat({ id: 'sa6', transport: familyChat(parent, store) });
    await ui.sendMessage({ text: 'pick a colour' });
    const part = toolPart(ui.last);
    expect(part).toMatchObject({ type: 'tool-helper', state: 'input-available' });
    const child = ui.last.parts.find((p) => p.type === 'data-polyloop-child') as { id: string; data: unknown };
    expect(child).toMatchObject({
      id: 'chat:sa6:1:s0.c0',
      data: {
        runId: 'chat:sa6:1',
        resultId: 's0.c0',
        toolCallId: part.toolCallId,
        childRunId: 'chat:sa6:1.s0.action',
        kind: 'answer',
        action: { name: 'ask', arguments: { question: 'colour?' } },
        accepts: ['answer', 'deny', 'cancel'],
      },
    });
    await ui.addToolOutput({ tool: 'helper', toolCallId: part.toolCallId, output: 'blue' });
    await ui.sendMessage();
    expect(ui.status).toBe('ready');
    expect(toolPart(ui.last)).toMatchObject({ state: 'output-available', output: 'the child heard blue' });
    const childLog = readRunLog(await store.readLog('chat:sa6:1.s0.action'));
    expect(childLog.ended?.stopReason).toBe('final_answer');
    expect((await loadChat(store, 'sa6'))[1]).toEqual(ui.last);
  });
});

describe("a sub-agent's settlement and the parts' replies", () => {
  const settle: InputRequest = {
    resultId: 's0.c0',
    stepIndex: 0,
    kind: 'child',
    target: 'action',
    decision: { kind: 'action', action: { kind: 'tool_call', name: 'research', arguments: { question: 'q' } } },
    child: {
      runId: 'r.s0.action',
      request: {
        resultId: 's0.settle',
        stepIndex: 0,
        kind: 'settle',
        target: 'action',
        decision: { kind: 'action', action: { kind: 'tool_call', name: 'note', arguments: { text: 'x' } } },
      },
    },
  } as unknown as InputRequest;

  it("shows the child's settlement as the settle part of the parent's request, with what the child accepts", () => {
    const chunks: unknown[] = [];
    const turn = new TurnChunks('r', (c) => chunks.push(c));
    turn.event({ type: 'input_requested', runId: 'r', stepIndex: 0, resultId: 's0.c0', request: settle } as never);
    const part = chunks.find((c) => (c as { type: string }).type === 'data-polyloop-settle');
    expect(part).toEqual({
      type: 'data-polyloop-settle',
      id: 'r:s0.c0',
      data: {
        runId: 'r',
        resultId: 's0.c0',
        stepIndex: 0,
        target: 'action',
        action: { kind: 'tool_call', name: 'note', arguments: { text: 'x' } },
        accepts: ['executed', 'retry', 'deny', 'cancel'],
      },
    });
    const reply = { kind: 'executed', observation: 'it happened' };
    const parts = [{ type: 'data-polyloop-settle', id: 'r:s0.c0', data: { reply } }];
    expect(replyOfParts(parts, 'r', settle, null)).toEqual({ ...reply, resultId: 's0.c0' });
  });

  it("reads an approval response to a child's approval as a reply to the parent's request", () => {
    const approval = {
      ...settle,
      child: { runId: 'r.s0.action', request: { ...settle.child?.request, kind: 'approval' } },
    };
    const parts = [{ type: 'tool-research', toolCallId: 'r:s0', approval: { id: 'r:s0.c0', approved: true } }];
    expect(replyOfParts(parts, 'r', approval as InputRequest, 'r:s0')).toEqual({ kind: 'approve', resultId: 's0.c0' });
  });
});

/** A parent whose `helper` tool runs a child that asks the person a question (`ask`, answered by a person). */
function askingFamily(store: RunStore): AgentDefinition {
  const defaults = (tools: ToolRegistry) => defaultsFor(tools, { budget: BUDGET });
  const synthetic = SYNTHETIC;
  const ask = {
    name: 'ask',
    description: 'Ask the person.',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    answeredBy: 'human' as const,
  };
  const childTools = ToolRegistry.of([ask]);
  const childModel = scriptedModel((call) => {
    if (call.callSeq === 0) return '{"tool":"ask","args":{"question":"colour?"}}';
    const heard = (call.messages.at(-1)?.content ?? []).flatMap((b) => ('text' in b ? [b.text] : [])).join('');
    return JSON.stringify({ final: `the child heard ${heard}` });
  });
  const child = defineAgent({
    model: childModel,
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: synthetic,
    defaults: defaults(childTools),
  });
  const helper = agentTool({
    name: 'helper',
    description: 'A helper sub-agent.',
    parameters: { type: 'object', properties: {}, required: [] },
    agent: child,
    request: () => ({ goal: 'ask the person their colour' }),
  });
  const parentTools = ToolRegistry.of([helper]);
  return defineAgent({
    model: scriptedModel(['{"tool":"helper","args":{}}', '{"final":"done"}']),
    interpreter: jsonActionInterpreter(),
    store,
    events: collectingSink(),
    syntheticObservations: synthetic,
    defaults: defaults(parentTools),
  });
}
