/** The pure shape checks of values from outside the library (internal/values.ts): JSON values, content blocks, messages. */
import { describe, expect, it } from 'vitest';
import {
  contentBlockProblem,
  contentProblem,
  jsonProblem,
  MAX_JSON_DEPTH,
  messageProblem,
} from '../../../src/core/internal/values.ts';

const nested = (depth: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { k: v };
  return v;
};
const cyclicObject = (): unknown => {
  const o: Record<string, unknown> = { a: 1 };
  o['self'] = o;
  return o;
};
const cyclicArray = (): unknown => {
  const a: unknown[] = [1];
  a.push({ back: a });
  return a;
};
class Point {
  x = 1;
}

describe('jsonProblem', () => {
  it.each([
    { label: 'a string', value: 'x' },
    { label: 'an empty string', value: '' },
    { label: 'zero', value: 0 },
    { label: 'a negative float', value: -1.5 },
    { label: 'true', value: true },
    { label: 'null', value: null },
    { label: 'an empty object', value: {} },
    { label: 'an empty array', value: [] },
    { label: 'a null-prototype object', value: Object.assign(Object.create(null) as object, { a: 1 }) },
    { label: 'nested objects and arrays', value: { a: [1, { b: null, c: ['x', true] }] } },
    { label: 'the same object twice, not a cycle', value: ((s) => ({ a: s, b: [s, s] }))({ shared: 1 }) },
    { label: `a value exactly ${MAX_JSON_DEPTH} levels deep`, value: nested(MAX_JSON_DEPTH) },
  ])('accepts $label', ({ value }) => {
    expect(jsonProblem(value)).toBeNull();
  });

  it.each([
    { label: 'undefined', value: undefined, problem: /the value is undefined/ },
    { label: 'a function', value: () => 1, problem: /the value is a function/ },
    { label: 'a symbol', value: Symbol('s'), problem: /a symbol/ },
    { label: 'a BigInt', value: 10n, problem: /a bigint, which JSON cannot hold/ },
    { label: 'NaN', value: Number.NaN, problem: /is NaN/ },
    { label: 'Infinity', value: Number.POSITIVE_INFINITY, problem: /is Infinity/ },
    { label: '-Infinity', value: Number.NEGATIVE_INFINITY, problem: /is -Infinity/ },
    { label: 'a Date', value: new Date(0), problem: /a Date object, not plain JSON/ },
    { label: 'a Map', value: new Map(), problem: /a Map object/ },
    { label: 'a class instance', value: new Point(), problem: /a Point object/ },
    {
      label: 'an object that contains itself',
      value: cyclicObject(),
      problem: /\.self refers back to itself \(a cycle\)/,
    },
    {
      label: 'an array reached again through its item',
      value: cyclicArray(),
      problem: /\[1\]\.back refers back to itself/,
    },
    {
      label: `a value ${MAX_JSON_DEPTH + 1} levels deep`,
      value: nested(MAX_JSON_DEPTH + 1),
      problem: new RegExp(`nested more than ${MAX_JSON_DEPTH} levels`),
    },
    { label: 'a value 100,000 levels deep (no stack overflow)', value: nested(100_000), problem: /nested more than/ },
    { label: 'a BigInt deep inside', value: { a: [{ b: 1n }] }, problem: /^\.a\[0\]\.b is a bigint/ },
    { label: 'an undefined property', value: { a: undefined }, problem: /^\.a is undefined/ },
  ])('names $label', ({ value, problem }) => {
    expect(jsonProblem(value)).toMatch(problem);
  });

  it.each([
    { path: 'request.x', value: { a: [1n] }, expected: 'request.x.a[0]' },
    { path: 'args', value: [Number.NaN], expected: 'args[0]' },
    { path: 'args', value: 1n, expected: 'args ' },
  ])('prefixes the path it is given ($path)', ({ path, value, expected }) => {
    expect(jsonProblem(value, path)).toContain(expected);
  });

  it.each([
    { maxDepth: 1, value: { a: 1 }, ok: true },
    { maxDepth: 1, value: { a: {} }, ok: false },
    { maxDepth: 3, value: nested(3), ok: true },
    { maxDepth: 3, value: nested(4), ok: false },
  ])('honours a smaller depth limit ($maxDepth)', ({ maxDepth, value, ok }) => {
    expect(jsonProblem(value, '', maxDepth) === null).toBe(ok);
  });
});

describe('contentBlockProblem', () => {
  it.each([
    { label: 'a text block', block: { type: 'text', text: 'hi' } },
    { label: 'an empty text block', block: { type: 'text', text: '' } },
    { label: 'a tool call', block: { type: 'tool_call', id: 'c1', name: 'add', arguments: { a: 1 } } },
    {
      label: 'a tool call with non-object arguments',
      block: { type: 'tool_call', id: 'c1', name: 'add', arguments: 'raw' },
    },
    { label: 'a tool result', block: { type: 'tool_result', toolCallId: 'c1', text: '3' } },
    { label: 'a reasoning block', block: { type: 'reasoning', text: 'because' } },
    { label: 'a signed reasoning block', block: { type: 'reasoning', text: 'because', signature: 'sig' } },
  ])('accepts $label', ({ block }) => {
    expect(contentBlockProblem(block, 'b')).toBeNull();
  });

  it.each([
    { label: 'null', block: null, problem: 'b must be a content block object, got null' },
    { label: 'a string', block: 'hello', problem: 'b must be a content block object, got a string' },
    { label: 'an array', block: [], problem: 'b must be a content block object, got an array' },
    { label: 'a BigInt', block: 1n, problem: 'b must be a content block object, got a bigint' },
    {
      label: 'an unknown type',
      block: { type: 'image', url: 'x' },
      problem: 'b.type must be one of text, tool_call, tool_result, reasoning, opaque, got "image"',
    },
    {
      label: 'no type',
      block: { text: 'x' },
      problem: 'b.type must be one of text, tool_call, tool_result, reasoning, opaque, got undefined',
    },
    { label: 'a numeric text', block: { type: 'text', text: 12345 }, problem: 'b.text must be a string, got a number' },
    { label: 'a text block without text', block: { type: 'text' }, problem: 'b.text must be a string, got undefined' },
    {
      label: 'a tool call without id',
      block: { type: 'tool_call', name: 'add', arguments: {} },
      problem: 'b.id must be a string, got undefined',
    },
    {
      label: 'a tool call with a numeric name',
      block: { type: 'tool_call', id: 'c', name: 5, arguments: {} },
      problem: 'b.name must be a string, got a number',
    },
    {
      label: 'a tool call with BigInt arguments',
      block: { type: 'tool_call', id: 'c', name: 'n', arguments: { a: 1n } },
      problem: 'b.arguments.a is a bigint',
    },
    {
      label: 'a tool call without arguments',
      block: { type: 'tool_call', id: 'c', name: 'n' },
      problem: 'b.arguments is undefined',
    },
    {
      label: 'a tool result without toolCallId',
      block: { type: 'tool_result', text: 'x' },
      problem: 'b.toolCallId must be a string',
    },
    {
      label: 'a tool result with null text',
      block: { type: 'tool_result', toolCallId: 'c', text: null },
      problem: 'b.text must be a string, got null',
    },
    {
      label: 'a reasoning block with a numeric signature',
      block: { type: 'reasoning', text: 't', signature: 1 },
      problem: 'b.signature must be a string, got a number',
    },
  ])('refuses $label', ({ block, problem }) => {
    expect(contentBlockProblem(block, 'b')).toContain(problem);
  });
});

describe('contentProblem and messageProblem', () => {
  it.each([
    { label: 'an empty content array', content: [], problem: null },
    {
      label: 'two good blocks',
      content: [
        { type: 'text', text: 'a' },
        { type: 'reasoning', text: 'b' },
      ],
      problem: null,
    },
    {
      label: 'a string instead of an array',
      content: 'hello',
      problem: 'c must be an array of content blocks, got a string',
    },
    { label: 'an array holding null', content: [null], problem: 'c[0] must be a content block object, got null' },
    {
      label: 'a bad second block',
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 7 },
      ],
      problem: 'c[1].text must be a string',
    },
  ])('contentProblem: $label', ({ content, problem }) => {
    const found = contentProblem(content, 'c');
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });

  it.each([
    { label: 'a user message', message: { role: 'user', content: [{ type: 'text', text: 'hi' }] }, problem: null },
    { label: 'a system message with no blocks', message: { role: 'system', content: [] }, problem: null },
    {
      label: 'an assistant tool call',
      message: { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'n', arguments: {} }] },
      problem: null,
    },
    { label: 'null', message: null, problem: 'm must be a message object, got null' },
    { label: 'a string', message: 'hi', problem: 'm must be a message object, got a string' },
    {
      label: 'an unknown role',
      message: { role: 'tool', content: [] },
      problem: 'm.role must be system, user or assistant, got "tool"',
    },
    { label: 'no role', message: { content: [] }, problem: 'm.role must be system, user or assistant, got undefined' },
    {
      label: 'a string content',
      message: { role: 'user', content: 'hi' },
      problem: 'm.content must be an array of content blocks',
    },
    {
      label: 'a block of unknown type',
      message: { role: 'user', content: [{ type: 'html', html: '<b>' }] },
      problem: 'm.content[0].type must be one of',
    },
    {
      label: 'a numeric text',
      message: { role: 'user', content: [{ type: 'text', text: 12345 }] },
      problem: 'm.content[0].text must be a string, got a number',
    },
  ])('messageProblem: $label', ({ message, problem }) => {
    const found = messageProblem(message, 'm');
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });
});
