/**
 * PolyLoop with the tools of an MCP server:
 * `npx tsx --tsconfig examples/mcp/tsconfig.json examples/mcp/main.mts` (here, against the source).
 *
 * Starts a small MCP server on 127.0.0.1 (the SDK's server classes; yours would be elsewhere),
 * connects to it with `connectMcp`, and lets a stand-in model call its two tools. Trusted, the
 * read-only `count_words` may run again after a crash; `append_note` says nothing about being
 * harmless, so it never runs twice, and it asks a person first (`needsApproval: 'destructive'`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { Server } from '@modelcontextprotocol/server';
import type { Tool } from '@modelcontextprotocol/server';
import {
  defineAgent,
  InMemoryStore,
  jsonActionInterpreter,
  resume,
  run,
  silentSink,
  STANDARD_SYNTHETIC_OBSERVATIONS,
} from 'polyloop';
import type { ModelCaller, RunRequest } from 'polyloop';
import { connectMcp } from 'polyloop/mcp';

// --- an MCP server (stateless: one server object per HTTP request) ---
const notes: string[] = [];
const TOOLS: Tool[] = [
  {
    name: 'count_words',
    description: 'Count the words of a text.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'append_note',
    description: 'Append a note.',
    inputSchema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
  },
];
function mcpServer(): Server {
  const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({ tools: TOOLS }));
  server.setRequestHandler('tools/call', ({ params }) => {
    const args = params.arguments ?? {};
    if (params.name === 'count_words')
      return { content: [{ type: 'text', text: String(String(args['text']).split(/\s+/).filter(Boolean).length) }] };
    notes.push(String(args['note']));
    return { content: [{ type: 'text', text: `noted (${notes.length} notes)` }] };
  });
  return server;
}
const http = createServer(async (req, res) => {
  const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const server = mcpServer();
  await server.connect(transport);
  res.on('close', () => void server.close());
  await transport.handleRequest(req, res);
});
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;

// --- the agent ---
const mcp = await connectMcp({ url, trust: true, needsApproval: 'destructive' });
for (const name of mcp.registry.names()) {
  const t = mcp.registry.get(name);
  console.log(`${name}: replayPolicy ${t?.replayPolicy}, needsApproval ${t?.needsApproval}`);
}
const replies = [
  { tool: 'count_words', args: { text: 'the quick brown fox' } },
  { tool: 'append_note', args: { note: 'the text has 4 words' } },
  { final: 'Counted and noted.' },
];
const model: ModelCaller = {
  params: { model: 'stand-in' },
  call: async ({ callSeq }) => ({ callId: `m${callSeq}`, text: JSON.stringify(replies[callSeq]), reasoning: null }),
};
const agent = defineAgent({
  model,
  interpreter: jsonActionInterpreter(),
  store: new InMemoryStore(),
  events: silentSink(),
  syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
});
const request: RunRequest = {
  runId: 'mcp-1',
  tools: mcp.registry,
  executor: mcp.registry.executor(),
  toolRenderStyle: 'json',
  cancelGraceMs: 2_000,
  budget: { maxSteps: 10, maxValidActions: 5, maxContextChars: 50_000 },
  context: {
    run: [],
    goal: [{ role: 'user', content: [{ type: 'text', text: 'Count the words, then note the count.' }] }],
  },
  injections: {},
  modelBinding: {},
  modelReplayPolicy: 'safe',
  observationTemplate: '{observation}',
};
const paused = await run(agent, request);
console.log(`${paused.stopReason}: ${paused.pending?.kind} for ${JSON.stringify(paused.pending?.decision?.action)}`);
const result = await resume(agent, request, { input: { kind: 'approve', resultId: paused.pending!.resultId } });
console.log(result.trajectory.map((s) => `#${s.stepIndex} ${s.observation ?? ''}`).join('\n'));
console.log(result.stopReason, result.finalAnswer, notes);
await mcp.close();
http.close();
