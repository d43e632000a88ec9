/**
 * Tests that need something of the machine rather than of the repository (a tracer, an API key, an
 * operating system). Where it is missing they are skipped, and say so: Vitest's default reporter
 * only counts skipped tests, and a proof that never ran must not look like one that passed.
 * What the repository ships (an example, a fixture) is never a reason to skip: a test fails on it.
 */

/** `present`, after printing why the tests it gates are skipped when it is false. */
export function machineHas(present: boolean, skipped: string): boolean {
  if (!present) console.warn(`skipped: ${skipped}`);
  return present;
}
