/** polyloop/mcp in Chromium, against the real MCP fixture server on loopback (CORS; started by the globalSetup). */
import { describe, inject } from 'vitest';
import type {} from '../fixtures/mcp/provided.ts';
import { mcpRuntimeCases } from '../fixtures/mcp/runtime-cases.ts';

describe('MCP tools in Chromium', () => mcpRuntimeCases(inject('mcpBase'), 'chromium'));
