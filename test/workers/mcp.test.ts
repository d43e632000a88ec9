/** polyloop/mcp inside workerd, against the real MCP fixture server on loopback (started by the globalSetup). */
import { describe, inject } from 'vitest';
import type {} from '../fixtures/mcp/provided.ts';
import { mcpRuntimeCases } from '../fixtures/mcp/runtime-cases.ts';

describe('MCP tools inside workerd', () => mcpRuntimeCases(inject('mcpBase'), 'workerd'));
