/** The checked-in cross-runtime fixtures (test/fixtures/portability), read and written from Node. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixtureName, v10FixtureName } from '../../portability/cuts.ts';
import type { Cut, Runtime } from '../../portability/cuts.ts';

export const FIXTURE_DIR = fileURLToPath(new URL('../../fixtures/portability/', import.meta.url));

/** True when `npm run fixtures:portability` runs these tests to (re)write the fixtures. */
export const WRITE_FIXTURES = process.env['POLYLOOP_WRITE_FIXTURES'] === '1';

/** A current fixture. */
export const readFixture = (runtime: Runtime, cut: Cut): string =>
  readFileSync(join(FIXTURE_DIR, fixtureName(runtime, cut)), 'utf8');

/** A 1.0-era fixture (never rewritten). */
export const readV10Fixture = (runtime: Runtime, cut: Cut): string =>
  readFileSync(join(FIXTURE_DIR, v10FixtureName(runtime, cut)), 'utf8');

/** (Re)write a current fixture; the 1.0-era ones have no writer. */
export function writeFixture(runtime: Runtime, cut: Cut, ndjson: string): void {
  mkdirSync(FIXTURE_DIR, { recursive: true });
  writeFileSync(join(FIXTURE_DIR, fixtureName(runtime, cut)), ndjson);
}
