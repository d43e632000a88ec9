/** The checked-in cross-runtime fixtures (test/fixtures/portability), read and written from Node. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixtureName } from '../../portability/reference.ts';
import type { Cut, Runtime } from '../../portability/reference.ts';

export const FIXTURE_DIR = fileURLToPath(new URL('../../fixtures/portability/', import.meta.url));

/** True when `npm run fixtures:portability` runs these tests to (re)write the fixtures. */
export const WRITE_FIXTURES = process.env['POLYLOOP_WRITE_FIXTURES'] === '1';

export const readFixture = (runtime: Runtime, cut: Cut): string => readFileSync(join(FIXTURE_DIR, fixtureName(runtime, cut)), 'utf8');

export function writeFixture(runtime: Runtime, cut: Cut, ndjson: string): void {
  mkdirSync(FIXTURE_DIR, { recursive: true });
  writeFileSync(join(FIXTURE_DIR, fixtureName(runtime, cut)), ndjson);
}
