/**
 * `jsonActionInterpreter` lives in core (`polyloop`) since issue 14, where a local or scripted
 * model can use it without the test kit; `polyloop/testing` keeps exporting the same function.
 * @module
 */
export { jsonActionInterpreter } from '../core/index.ts';
