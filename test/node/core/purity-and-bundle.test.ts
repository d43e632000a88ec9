/**
 * Machine checks of the dependency rules (docs/design/README.md#dependency-rules): the internal
 * modules are pure (rule 4), the `polyloop` entry bundles for a neutral platform with no `node:`
 * import and no store or adapter code (rules 1 and 6), its validator needs no code generation from
 * strings (decision 0001), and that its error classes share one base.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { Metafile } from 'esbuild';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import * as core from '../../../src/core/index.ts';
import { tempDir } from '../../support/temp-dir.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const INTERNAL = ['assembly', 'stopping', 'recovery', 'step-track', 'values'].map((m) => `src/core/internal/${m}.ts`);

/** What a pure module must not mention: async, clock, randomness, I/O, timers. */
const FORBIDDEN_IDENTIFIERS = [
  'Date',
  'crypto',
  'fetch',
  'setTimeout',
  'setInterval',
  'queueMicrotask',
  'performance',
  'Promise',
  'eval',
  'Function',
  'globalThis',
  'process',
  'require',
];

type Finding = { readonly what: string; readonly line: number };

/** Tokens (comments and string contents skipped) that break purity. */
function impurities(file: string, source: string): Finding[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: Finding[] = [];
  const line = (node: ts.Node): number => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isAwaitExpression(node)) found.push({ what: 'await', line: line(node) });
    if (ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword))
      found.push({ what: 'async', line: line(node) });
    if (ts.isIdentifier(node) && FORBIDDEN_IDENTIFIERS.includes(node.text))
      found.push({ what: node.text, line: line(node) });
    if (ts.isPropertyAccessExpression(node) && node.getText(sf) === 'Math.random')
      found.push({ what: 'Math.random', line: line(node) });
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      // Its pure siblings (each checked here too), the types and the errors.
      !/^(\.\.\/(types|errors)|\.\/[a-z-]+)\.ts$/.test(node.moduleSpecifier.text)
    ) {
      found.push({ what: `import ${node.moduleSpecifier.text}`, line: line(node) });
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      found.push({ what: 'dynamic import', line: line(node) });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe('the internal modules are pure', () => {
  it.each(INTERNAL)(
    '%s has no await, async, clock, randomness, timers, I/O or imports beyond types, errors and its pure siblings',
    async (file) => {
      const source = await readFile(join(ROOT, file), 'utf8');
      expect(source.length).toBeGreaterThan(200);
      expect(impurities(file, source)).toEqual([]);
    },
  );

  it('the purity check finds what it looks for (a control on session.ts and a planted sample)', async () => {
    const session = await readFile(join(ROOT, 'src/core/session.ts'), 'utf8');
    const whats = new Set(impurities('session.ts', session).map((f) => f.what));
    expect(whats).toContain('await');
    expect(whats).toContain('async');
    const planted = [
      "import { readFile } from 'node:fs';",
      '// await in a comment is fine; so is "Date" in a string',
      'export const s = "fetch Date";',
      'export const a = () => Math.random() + Date.now() + performance.now();',
      'export function t() { setTimeout(() => 0, 1); return crypto.randomUUID(); }',
    ].join('\n');
    expect(impurities('planted.ts', planted).map((f) => f.what)).toEqual([
      'import node:fs',
      'Math.random',
      'Date',
      'performance',
      'setTimeout',
      'crypto',
    ]);
  });
});

describe('the polyloop entry bundle', () => {
  let metafile: Metafile;
  let code: string;

  beforeAll(async () => {
    const result = await build({
      entryPoints: [join(ROOT, 'src/core/index.ts')],
      absWorkingDir: ROOT,
      bundle: true,
      platform: 'neutral',
      format: 'esm',
      mainFields: ['module', 'main'],
      // A checkout whose node_modules is a link (a git worktree sharing one install) keeps its
      // inputs named from this root, not from wherever the link points.
      preserveSymlinks: true,
      metafile: true,
      write: false,
      logLevel: 'silent',
    });
    metafile = result.metafile;
    code = result.outputFiles[0]?.text ?? '';
  });

  it('has inputs only from src/core and @cfworker/json-schema', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toContain('src/core/index.ts');
    expect(inputs).toContain('src/core/session.ts');
    const outside = inputs.filter(
      (p) => !p.startsWith('src/core/') && !p.startsWith('node_modules/@cfworker/json-schema/'),
    );
    expect(outside).toEqual([]);
  });

  it('pulls in no store or adapter code beyond InMemoryStore', () => {
    const inputs = Object.keys(metafile.inputs);
    expect(inputs.filter((p) => /platform-|adapters|file-store|idb|durable|hono|openai|anthropic/i.test(p))).toEqual(
      [],
    );
  });

  it('imports no node: module and leaves no import unresolved', () => {
    const imports = Object.values(metafile.inputs).flatMap((input) => input.imports);
    expect(imports.filter((i) => i.path.startsWith('node:') || i.external === true)).toEqual([]);
    const output = Object.values(metafile.outputs)[0];
    expect(output?.imports ?? []).toEqual([]);
    expect(code).not.toMatch(/from\s*["']node:|import\(\s*["']node:|require\(/);
  });

  it('contains no eval( and no new Function(', () => {
    expect(code.length).toBeGreaterThan(10_000);
    expect(code).not.toMatch(/\beval\s*\(/);
    expect(code).not.toMatch(/new\s+Function\s*\(/);
  });

  it('validates tool arguments and runs an agent under --disallow-code-generation-from-strings', async () => {
    // The workerd rule, reproduced in plain Node: any eval / new Function throws EvalError.
    const dir = await tempDir('polyloop-bundle-');
    await writeFile(join(dir, 'polyloop.mjs'), code);
    await writeFile(join(dir, 'main.mjs'), DRIVER);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--disallow-code-generation-from-strings', join(dir, 'main.mjs')],
      { timeout: 20_000 },
    );
    expect(JSON.parse(stdout)).toEqual({
      evalRefused: true,
      valid: { ok: true },
      invalidOk: false,
      run: { stopReason: 'final_answer', finalAnswer: '5', steps: 2, validActions: 1, observations: ['5', null] },
    });
  });
});

/** A plain-JS program run against the bundle in a child Node that refuses code generation. */
const DRIVER = `
import { ToolRegistry, defineAgent, run, InMemoryStore } from './polyloop.mjs';
let evalRefused = false;
try { new Function('return 1')(); } catch (e) { evalRefused = e instanceof EvalError; }
const schema = { type: 'object', $defs: { n: { type: 'integer' } }, properties: { a: { $ref: '#/$defs/n' }, b: { $ref: '#/$defs/n' } }, required: ['a', 'b'] };
const tools = ToolRegistry.of([{ name: 'add', description: 'Add.', parameters: schema, replayPolicy: 'safe', handler: async ({ a, b }) => String(a + b) }]);
await tools.loaded();
const valid = tools.validate({ kind: 'tool_call', name: 'add', arguments: { a: 2, b: 3 } });
const invalidOk = tools.validate({ kind: 'tool_call', name: 'add', arguments: { a: 'x' } }).ok;
const replies = ['{"tool":"add","args":{"a":2,"b":3}}', '{"final":"5"}'];
const model = { params: { model: 'scripted' }, call: async (c) => ({ callId: 'c' + c.callSeq, text: replies[c.callSeq], reasoning: null }) };
const interpreter = { params: { i: 'json' }, interpret(reply) {
  const p = JSON.parse(reply.text);
  if (p.final) return { kind: 'final', answer: p.final, historyText: reply.text };
  return { kind: 'action', action: { kind: 'tool_call', name: p.tool, arguments: p.args }, trajectoryRepr: p.tool, historyText: reply.text };
} };
const agent = defineAgent({ model, interpreter, store: new InMemoryStore(), events: { params: {}, deliver() {} }, syntheticObservations: { notExecuted: 'n', envError: 'e' } });
const r = await run(agent, { runId: 'x', budget: { maxSteps: 5, maxValidActions: 5, maxContextChars: 100000 }, executor: tools.executor(), tools,
  context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'add 2 and 3' }] }] }, injections: {}, modelBinding: {},
  modelReplayPolicy: 'safe', observationTemplate: '{observation}', toolRenderStyle: 'json', cancelGraceMs: 100 });
console.log(JSON.stringify({ evalRefused, valid, invalidOk, run: { stopReason: r.stopReason, finalAnswer: r.finalAnswer, steps: r.steps, validActions: r.validActions, observations: r.trajectory.map((s) => s.observation) } }));
`;

// The names every entry exports, types included, are listed in test/node/package/entry-exports.test.ts.
describe('the error classes of the polyloop entry', () => {
  it('the core entry exports every error class the loop, its stores and its tools throw', () => {
    const errors = [
      'RunExistsError',
      'RunNotFoundError',
      'RunIdentityMismatchError',
      'SchemaVersionError',
      'StoreError',
      'ToolEnvironmentError',
      'InvalidRequestError',
      'CorruptLogError',
      'RunLockedError',
      'InvalidInputError',
    ] as const;
    for (const name of errors) {
      const Cls = core[name] as unknown as { prototype: unknown };
      expect(Cls.prototype, name).toBeInstanceOf(core.PolyLoopError);
    }
  });
});
