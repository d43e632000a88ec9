/**
 * `jsonActionInterpreter` lives in core (`polyloop`), so that a local or scripted model can use it
 * without the test kit; `polyloop/testing` keeps exporting the same function.
 * @module
 */
export { jsonActionInterpreter } from '../core/index.ts';
