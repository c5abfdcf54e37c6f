// The calls every openai-client scenario makes, whatever instruments it.
'use strict';

module.exports = function openaiCalls(ctx, { responses = false, embeddings = true } = {}) {
  const OpenAI = require('openai');
  const client = new OpenAI({ apiKey: ctx.apiKey, baseURL: ctx.openaiBaseURL, maxRetries: 0 });
  const drain = async (stream) => { for await (const _ of stream) { /* consume */ } };
  const calls = {
    chat: (prompt) => client.chat.completions.create({
      model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You are a billing assistant.' }, { role: 'user', content: prompt }],
    }),
    stream: async (prompt) => drain(await client.chat.completions.create({
      model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: prompt }],
    })),
    tool: (prompt) => client.chat.completions.create({
      model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }],
      tools: [{ type: 'function', function: ctx.tool }],
    }),
    // The same long system prompt twice: the second reads the prompt
    // cache; gpt-5 also reports reasoning tokens.
    cache_warm: (prompt) => client.chat.completions.create({
      model: 'gpt-5', messages: [{ role: 'system', content: ctx.longSystem }, { role: 'user', content: prompt }],
    }),
    cache_hit: (prompt) => client.chat.completions.create({
      model: 'gpt-5', messages: [{ role: 'system', content: ctx.longSystem }, { role: 'user', content: prompt }],
    }),
  };
  if (embeddings) {
    calls.embed = (prompt) => client.embeddings.create({ model: 'text-embedding-3-small', input: prompt });
  }
  if (responses) {
    calls.responses = (prompt) => client.responses.create({ model: 'gpt-4o-mini', instructions: 'You are a billing assistant.', input: prompt });
    calls.responses_stream = async (prompt) => drain(await client.responses.create({ model: 'gpt-4o-mini', input: prompt, stream: true }));
  }
  return calls;
};
