/**
 * Our model adapters through the `polyloop/testing` contract suites: `openAIModel` and
 * `anthropicModel` (plain and streaming) pointed at the loopback fakes of the providers' APIs,
 * and the native tool interpreters both adapters ship.
 */
import { afterAll, beforeAll } from 'vitest';
import { anthropicModel, anthropicToolInterpreter } from '../../../src/adapters/anthropic.ts';
import { openAIModel, openAIToolInterpreter } from '../../../src/adapters/openai.ts';
import { decisionInterpreterContract, modelCallerContract } from '../../../src/testing/index.ts';
import type { ModelScenario } from '../../../src/testing/index.ts';
import { describeContract } from '../../contract/vitest-suite.ts';
import type { AnthropicFake, AnthropicTurn } from '../adapters/anthropic-server.ts';
import type { OpenAIFake, OpenAITurn } from '../adapters/openai-server.ts';
import { startAnthropicFake, startOpenAIFake } from '../adapters/serve.ts';

let openai: OpenAIFake;
let anthropic: AnthropicFake;
beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startOpenAIFake(), startAnthropicFake()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()]);
});

/** Each case gets exactly the next turn its scenario asks for: a reply with reasoning, text and a tool call, or a hang. */
function nextTurn<T>(turns: T[], turn: T): void {
  turns.length = 0;
  turns.push(turn);
}

const openAITurn = (scenario: ModelScenario): OpenAITurn =>
  scenario === 'hang'
    ? { kind: 'hang' }
    : {
        kind: 'reply',
        text: 'Adding.',
        reasoning: 'I should add.',
        toolCalls: [{ id: 'call_9', name: 'add', arguments: '{"a":3,"b":4}' }],
        finishReason: 'tool_calls',
      };

const anthropicTurn = (scenario: ModelScenario): AnthropicTurn =>
  scenario === 'hang'
    ? { kind: 'hang' }
    : {
        kind: 'reply',
        stopReason: 'tool_use',
        content: [
          { type: 'thinking', thinking: 'I should add.', signature: 'sig-1' },
          { type: 'text', text: 'Adding.' },
          { type: 'tool_use', id: 'toolu_9', name: 'add', input: { a: 3, b: 4 } },
        ],
      };

for (const stream of [false, true]) {
  describeContract(
    modelCallerContract({
      name: `openAIModel${stream ? ' (streaming)' : ''} on the loopback fake`,
      makeModel: (scenario) => {
        nextTurn(openai.turns, openAITurn(scenario));
        return openAIModel({ model: 'gpt-contract', apiKey: 'sk-test', baseURL: openai.baseURL, stream });
      },
    }),
  );
  describeContract(
    modelCallerContract({
      name: `anthropicModel${stream ? ' (streaming)' : ''} on the loopback fake`,
      makeModel: (scenario) => {
        nextTurn(anthropic.turns, anthropicTurn(scenario));
        return anthropicModel({
          model: 'claude-contract',
          apiKey: 'sk-ant-test',
          baseURL: anthropic.baseURL,
          maxTokens: 256,
          stream,
        });
      },
    }),
  );
}

describeContract(
  decisionInterpreterContract({ name: 'openAIToolInterpreter', makeInterpreter: openAIToolInterpreter }),
);
describeContract(
  decisionInterpreterContract({ name: 'anthropicToolInterpreter', makeInterpreter: anthropicToolInterpreter }),
);
