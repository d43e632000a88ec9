/**
 * The check every options bag's test makes (Web APIs only: Node, workerd, Chromium): building with
 * a misspelt key throws (or rejects with) an `InvalidRequestError` naming the key and the known key
 * it most likely meant.
 */
import { expect } from 'vitest';
import { isPolyLoopError } from '../../src/core/index.ts';

/** The `InvalidRequestError` message `build` throws or rejects with; fails the test if nothing is refused. */
export async function refusalOf(build: () => unknown): Promise<string> {
  try {
    await build();
  } catch (e) {
    expect(isPolyLoopError(e, 'invalid_request'), String(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error('nothing was refused');
}

/** `build` is refused for `key`, and the message suggests `meant`. */
export async function expectUnknownOption(build: () => unknown, key: string, meant: string): Promise<void> {
  const message = await refusalOf(build);
  expect(message).toContain(`${key} is not an option of `);
  expect(message).toContain(`did you mean \`${meant}\`?`);
}
