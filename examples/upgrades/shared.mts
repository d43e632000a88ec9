/**
 * What both versions of the refund agent share: the `refund` tool and a stand-in for a model, so
 * the walkthrough in docs/upgrades.md runs offline.
 */
import type { ModelCaller, ToolSpec } from 'polyloop';

/** Money leaves: a call must never run twice, and a person approves each one first. */
export const refund: ToolSpec = {
  name: 'refund', description: 'Refund an order to the card it was paid with.',
  replayPolicy: 'never', needsApproval: true,
  parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  handler: async ({ order }) => `refunded order ${String(order)}`,
};

/**
 * A stand-in for a model: it refunds the order its goal names, then answers with what it saw and
 * which tools the call offered (so the walkthrough shows what a call after an upgrade is given).
 */
export const model: ModelCaller = {
  params: { model: 'refund-stand-in' },
  async call({ messages, callSeq, tools }) {
    const texts = messages.map((m) => m.content.map((part) => (part.type === 'text' ? part.text : '')).join(''));
    const order = texts.map((t) => /^Refund order (\S+)\.$/.exec(t)?.[1]).find((o) => o !== undefined) ?? '?';
    const offered = tools.map((t) => t.name).join(', ');
    const reply = callSeq === 0 ? { tool: 'refund', args: { order } } : { final: `${texts.at(-1)} (this call offered: ${offered})` };
    return { callId: `stand-in-${callSeq}`, text: JSON.stringify(reply), reasoning: null };
  },
};
