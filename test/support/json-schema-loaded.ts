/**
 * Vitest setup (every project): the JSON Schema validator loads on demand, after the first
 * `ToolRegistry.of` that needs it (docs/decisions/0081-tools-with-their-own-validator.md). Tests
 * check a registry on the line after `of`, as an app does once the validator has arrived, so it is
 * loaded once here, before any test; test/node/core/lazy-validator.test.ts proves the lazy path
 * on a fresh module graph.
 */
import { ToolRegistry } from '../../src/core/tools.ts';

const probe = { name: 'probe', description: 'Needs the JSON Schema validator.', parameters: { type: 'object' } };
await ToolRegistry.of([probe]).loaded();
