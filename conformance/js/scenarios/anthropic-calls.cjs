// The calls every Anthropic-client scenario makes.
'use strict';

module.exports = function anthropicCalls(ctx, sdk = '@anthropic-ai/sdk') {
  const Anthropic = require(sdk);
  const client = new (Anthropic.default || Anthropic)({ apiKey: ctx.apiKey, baseURL: ctx.anthropicBaseURL, maxRetries: 0 });
  const model = 'claude-sonnet-4-5';
  // The long system prompt marked for caching: the first call writes the
  // cache, the second reads it.
  const cachedSystem = [{ type: 'text', text: ctx.longSystem, cache_control: { type: 'ephemeral' } }];
  return {
    chat: (prompt) => client.messages.create({ model, max_tokens: 256, system: 'You are a billing assistant.', messages: [{ role: 'user', content: prompt }] }),
    stream: async (prompt) => {
      const stream = await client.messages.create({ model, max_tokens: 256, stream: true, messages: [{ role: 'user', content: prompt }] });
      for await (const _ of stream) { /* consume */ }
    },
    tool: (prompt) => client.messages.create({
      model, max_tokens: 256, messages: [{ role: 'user', content: prompt }],
      tools: [{ name: ctx.tool.name, description: ctx.tool.description, input_schema: ctx.tool.parameters }],
    }),
    cache_warm: (prompt) => client.messages.create({ model, max_tokens: 256, system: cachedSystem, messages: [{ role: 'user', content: prompt }] }),
    cache_hit: (prompt) => client.messages.create({ model, max_tokens: 256, system: cachedSystem, messages: [{ role: 'user', content: prompt }] }),
  };
};
