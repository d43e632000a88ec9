/** Version A of the agent module: two tools and its first system prompt. */
import { defineAgent, ToolRegistry } from '../../../src/core/index.ts';
import { COMMON_DEFAULTS, firstTools, seams, system } from './shared.ts';

const tools = ToolRegistry.of(firstTools());

export const agent = defineAgent({
  ...seams(),
  defaults: {
    ...COMMON_DEFAULTS,
    tools,
    executor: tools.executor(),
    context: { run: [system('You report the weather.')] },
  },
});
