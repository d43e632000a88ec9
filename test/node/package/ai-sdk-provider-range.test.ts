/**
 * The declarations of `polyloop/adapters/ai-sdk` as a user's compiler reads them: built from the
 * source with the package's own build settings, then type-checked with `skipLibCheck: false`
 * against every major of `@ai-sdk/provider` the package's optional peer range admits (3.x is the
 * devDependency alias `@ai-sdk/provider-v3`, 4.x the provider itself), with a user's file that
 * passes each specification version's model the installed provider declares.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTempDirs } from '../../support/temp-dir.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const TMP = await sharedTempDirs().make('polyloop-ai-sdk-types-');
const BUILT = join(TMP, 'build');
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

/** Each provider major the tests hold, where it is installed, and the model versions it declares. */
const PROVIDERS = [
  { major: 3, dir: resolve(ROOT, 'node_modules/@ai-sdk/provider-v3'), models: ['LanguageModelV2', 'LanguageModelV3'] },
  {
    major: 4,
    dir: resolve(ROOT, 'node_modules/@ai-sdk/provider'),
    models: ['LanguageModelV2', 'LanguageModelV3', 'LanguageModelV4'],
  },
] as const;

/** A user's file: every model type of the provider is accepted, a model of no known version is not. */
function userFile(models: readonly string[]): string {
  return [
    `import { aiSdkModel, aiSdkToolInterpreter } from './dist/adapters/ai-sdk.js';`,
    `import type { ${models.join(', ')} } from '@ai-sdk/provider';`,
    ...models.map((m) => `declare const ${m.toLowerCase()}: ${m};`),
    `export const callers = [${models.map((m) => `aiSdkModel(${m.toLowerCase()})`).join(', ')}];`,
    `export const interpreter = aiSdkToolInterpreter();`,
    `// @ts-expect-error a model of a specification version the adapter does not read`,
    `aiSdkModel({ specificationVersion: 'v1', provider: 'p', modelId: 'm' });`,
    '',
  ].join('\n');
}

/** Type-check a project the way a user's strict `tsc` would, without skipping declaration files; our diagnostics only. */
function diagnosticsOf(dir: string, roots: readonly string[]): string[] {
  const program = ts.createProgram(roots, {
    strict: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
  });
  return (
    ts
      .getPreEmitDiagnostics(program)
      // The provider's own declarations import `json-schema`, which ships no types: its business, not ours.
      .filter((d) => d.file === undefined || !d.file.fileName.includes('/node_modules/'))
      .map(
        (d) =>
          `${d.file ? d.file.fileName.slice(dir.length + 1) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      )
  );
}

describe('the ai-sdk adapter declarations', () => {
  beforeAll(async () => {
    // The package's build settings, for the adapter entry and what it imports only.
    writeFileSync(
      join(TMP, 'tsconfig.json'),
      JSON.stringify({
        extends: resolve(ROOT, 'tsconfig.build.json'),
        compilerOptions: {
          rootDir: resolve(ROOT, 'src'),
          outDir: join(BUILT, 'dist'),
          emitDeclarationOnly: true,
          sourceMap: false,
        },
        files: [resolve(ROOT, 'src/adapters/ai-sdk.ts')],
        include: [],
      }),
    );
    await run(resolve(ROOT, 'node_modules/.bin/tsc'), ['-p', join(TMP, 'tsconfig.json')], { cwd: ROOT });
  }, 120_000);

  it('name @ai-sdk/provider an optional peer whose range admits exactly the majors checked here', () => {
    expect(pkg.peerDependenciesMeta['@ai-sdk/provider']?.optional).toBe(true);
    const range = pkg.peerDependencies['@ai-sdk/provider'] ?? '';
    expect(range.split('||').map((r) => r.trim())).toEqual(PROVIDERS.map((p) => `^${p.major}.0.0`));
    for (const p of PROVIDERS) {
      const version = (JSON.parse(readFileSync(join(p.dir, 'package.json'), 'utf8')) as { version: string }).version;
      expect(version.split('.')[0], p.dir).toBe(String(p.major));
    }
  });

  for (const provider of PROVIDERS) {
    it(`type-check without skipLibCheck against @ai-sdk/provider ${provider.major}.x, taking each of its models`, () => {
      const dir = join(TMP, `v${provider.major}`);
      cpSync(join(BUILT, 'dist'), join(dir, 'dist'), { recursive: true });
      mkdirSync(join(dir, 'node_modules/@ai-sdk'), { recursive: true });
      symlinkSync(provider.dir, join(dir, 'node_modules/@ai-sdk/provider'), 'dir');
      writeFileSync(join(dir, 'user.ts'), userFile(provider.models));
      const declarations = readdirSync(join(dir, 'dist/adapters')).filter((f) => /^ai-sdk.*\.d\.ts$/.test(f));
      expect(declarations).toContain('ai-sdk.d.ts');
      const roots = [join(dir, 'user.ts'), ...declarations.map((f) => join(dir, 'dist/adapters', f))];
      expect(diagnosticsOf(dir, roots)).toEqual([]);
      // A whole-program type check: some 15 s on a quiet 2-core machine, more under load.
    }, 120_000);
  }
});
