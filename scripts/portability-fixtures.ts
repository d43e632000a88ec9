/**
 * `npm run fixtures:portability`: (re)write the cross-runtime fixtures of the portability law
 * (docs/design/laws.md#portability) in test/fixtures/portability — the reference run crashed at
 * each named cut, as FileStore leaves it in Node, a Durable Object in real workerd (Miniflare) and
 * IndexedDB in Chromium (five cuts each, of the current record schema). Each runtime's own test
 * writes its files in its "write fixtures" mode; this script runs them in turn, then the regular
 * tests, which import every runtime's fixtures into the others. The 1.0-era fixtures
 * (`*-v1.0-*.ndjson`) are never rewritten: they are the proof that old logs still import and
 * finish. Check the changed files in. Exits non-zero when any step fails.
 */
import { spawnSync } from 'node:child_process';

const WRITE = { POLYLOOP_WRITE_FIXTURES: '1', VITE_POLYLOOP_WRITE_FIXTURES: '1' };

const steps: { readonly what: string; readonly args: readonly string[]; readonly write: boolean }[] = [
  {
    what: 'Node (FileStore) and workerd (DurableObjectStore) fixtures',
    args: [
      '--project',
      'node',
      'test/node/portability/fixtures.test.ts',
      'test/node/portability/workerd-fixtures.test.ts',
    ],
    write: true,
  },
  {
    what: 'Chromium (IndexedDBStore) fixtures',
    args: ['--project', 'browser', 'test/browser/portability.test.ts'],
    write: true,
  },
  {
    what: 'the regular checks in every runtime',
    args: [
      '--project',
      'node',
      '--project',
      'workers',
      '--project',
      'browser',
      'test/node/portability/',
      'test/workers/portability.test.ts',
      'test/browser/portability.test.ts',
    ],
    write: false,
  },
];

for (const step of steps) {
  process.stdout.write(`\n== ${step.what}\n`);
  const env = step.write ? { ...process.env, ...WRITE } : process.env;
  const { status } = spawnSync('npx', ['vitest', 'run', ...step.args], { stdio: 'inherit', env });
  if (status !== 0) {
    process.stderr.write(`portability fixtures: ${step.what} failed (exit ${String(status)})\n`);
    process.exit(status ?? 1);
  }
}
process.stdout.write('\nFixtures written to test/fixtures/portability; check them in.\n');
