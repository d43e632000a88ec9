import { describe, expect, it } from 'vitest';
import { BUNDLES, measureBundles, overBudget, readBudgets } from '../../../bench/bundle.ts';
import type { BundleSize } from '../../../bench/bundle.ts';

// Sizes are deterministic (same sources, same esbuild), so unlike timings they may gate npm test.
const sizes = await measureBundles();
const budgets = await readBudgets();

/** The JSON Schema validator's modules: json-schema-tools.ts and what only it reaches. */
const validator = (p: string): boolean =>
  p.includes('@cfworker/json-schema') ||
  /^src\/core\/(json-schema-tools|schema-validat(or|e)|tool-schema|flat-schema|linear-pattern.*)\.ts$/.test(p);

describe('bundle size budgets (bench/budgets.json)', () => {
  it('gives every bundle a positive budget', () => {
    for (const name of BUNDLES) expect(budgets.gzipBytes[name], name).toBeGreaterThan(0);
  });

  it.each(sizes.map((s) => [s.name, s] as const))(
    'keeps the %s bundle within its gzipped budget',
    (_name, size: BundleSize) => {
      expect(size.gzipped).toBeGreaterThan(0);
      expect(overBudget([size], budgets)).toEqual([]);
    },
  );

  it('measures the core browser bundle without storage, network or Node code in it', () => {
    const core = sizes.find((s) => s.name === 'polyloop');
    expect(core).toBeDefined();
    const own = (core?.inputs ?? []).filter((p) => !p.includes('node_modules/'));
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((p) => p.startsWith('src/core/'))).toBe(true);
  });

  it('measures polyloop/otel without the OpenTelemetry API, which the user ships', () => {
    const otel = sizes.find((s) => s.name === 'polyloop/otel');
    expect(otel).toBeDefined();
    expect(otel?.inputs.some((p) => p.startsWith('src/otel/'))).toBe(true);
    expect(otel?.inputs.filter((p) => p.includes('@opentelemetry/'))).toEqual([]);
    expect(otel?.thirdParty).toBe(0);
  });

  it('measures the tab app with its IndexedDB store and zod tool, zod itself left out (the app ships it)', () => {
    const tab = sizes.find((s) => s.name === 'tab');
    expect(tab).toBeDefined();
    expect(tab?.inputs).toEqual(
      expect.arrayContaining(['bench/tab-app.ts', 'src/platform-web/idb-store.ts', 'src/zod/index.ts']),
    );
    expect(tab?.inputs.filter((p) => p.includes('node_modules/zod/'))).toEqual([]);
  });

  it('reaches the JSON Schema validator in the tab app only through json-schema-tools.ts, the one call to cut off', () => {
    // The validator's modules: what the dynamic import of json-schema-tools.ts moves out of what the
    // tab loads first (docs/decisions/0081-tools-with-their-own-validator.md).
    const imports = sizes.find((s) => s.name === 'tab')?.imports ?? {};
    const intoValidator = Object.entries(imports).flatMap(([from, to]) =>
      validator(from) ? [] : to.filter(validator).map((t) => `${from} -> ${t}`),
    );
    expect(intoValidator).toEqual(['src/core/tool-arguments.ts -> src/core/json-schema-tools.ts']);
  });

  it('loads the JSON Schema validator in the tab app on demand, in chunks of its own, none of it at first', () => {
    const tab = sizes.find((s) => s.name === 'tab');
    const lazy = tab?.lazy?.inputs ?? [];
    expect(lazy).toEqual(expect.arrayContaining(['src/core/json-schema-tools.ts', 'src/core/schema-validate.ts']));
    expect(lazy.filter((p) => !validator(p))).toEqual([]);
    expect(tab?.lazy?.gzipped).toBeGreaterThan(0);
    const whole = sizes.filter((s) => s.name !== 'tab').map((s) => s.lazy);
    expect(whole.every((l) => l === null)).toBe(true);
  });

  it('reports a bundle over its budget as a failure naming the bundle and both sizes', () => {
    const size: BundleSize = {
      name: 'polyloop',
      minified: 10,
      gzipped: budgets.gzipBytes.polyloop + 1,
      thirdParty: 0,
      inputs: [],
      imports: {},
      lazy: null,
    };
    expect(overBudget([size], budgets)).toEqual([
      `polyloop: ${budgets.gzipBytes.polyloop + 1} bytes gzipped exceeds its budget of ${budgets.gzipBytes.polyloop} bytes (bench/budgets.json)`,
    ]);
  });
});
