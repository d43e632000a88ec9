/**
 * The validator the MCP client checks a tool's structured output with: the core's, whose
 * patterns match in linear time. The SDK's own (ajv in Node, cfworker elsewhere) backtracks, and
 * an untrusted server picks both the `outputSchema` pattern and the string it meets — one crafted
 * pair would block the process as a tool schema could (decision 0051).
 * @module
 */
import type { JsonSchemaType, jsonSchemaValidator, JsonSchemaValidator } from '@modelcontextprotocol/client';
import { jsonSchemaCheck } from '../core/internal-entry.ts';

/** A `jsonSchemaValidator` provider for `new Client(…, { jsonSchemaValidator })`. */
export const linearOutputValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const check = jsonSchemaCheck(schema);
    return (input) => {
      const problem = check(input);
      return problem === null
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: problem };
    };
  },
};
