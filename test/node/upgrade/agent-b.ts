/** Version B of the agent module: one tool more (`forecast`) and a new system prompt. */
import { defineAgent, ToolRegistry } from '../../../src/core/index.ts';
import { COMMON_DEFAULTS, firstTools, seams, system } from './shared.ts';

const tools = ToolRegistry.of([
  ...firstTools(),
  {
    name: 'forecast',
    description: "Tomorrow's weather in a city.",
    replayPolicy: 'safe',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    handler: async () => 'rain tomorrow',
  },
]);

export const agent = defineAgent({
  ...seams(),
  defaults: {
    ...COMMON_DEFAULTS,
    tools,
    executor: tools.executor(),
    context: { run: [system("You report the weather and tomorrow's forecast.")] },
  },
});
