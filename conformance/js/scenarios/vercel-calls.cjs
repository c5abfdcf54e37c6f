// The calls of the Vercel AI SDK scenarios; telemetry is the integration
// under test (the OTel GenAI one or the legacy ai.* spans).
'use strict';

// telemetry() returns the AI SDK 7 integration to register; without it
// (AI SDK 6) the SDK's own ai.* spans are switched on per call. aiModule
// and openaiModule name the installed packages.
module.exports = function vercelCalls(ctx, telemetry, aiModule = 'ai', openaiModule = '@ai-sdk/openai') {
  let ai, openai;
  const load = async () => {
    if (!ai) {
      ai = await import(aiModule);
      const { createOpenAI } = await import(openaiModule);
      openai = createOpenAI({ apiKey: ctx.apiKey, baseURL: ctx.openaiBaseURL });
      if (telemetry) ai.registerTelemetry(telemetry());
    }
  };
  const opts = telemetry
    ? { maxRetries: 0, telemetry: { isEnabled: true } }
    : { maxRetries: 0, experimental_telemetry: { isEnabled: true } };
  return {
    chat: async (prompt) => { await load(); await ai.generateText({ ...opts, model: openai.chat('gpt-4o-mini'), system: 'You are a billing assistant.', prompt }); },
    stream: async (prompt) => {
      await load();
      const r = ai.streamText({ ...opts, model: openai.chat('gpt-4o-mini'), prompt });
      for await (const _ of r.textStream) { /* consume */ }
    },
    tool: async (prompt) => {
      await load();
      await ai.generateText({
        ...opts, model: openai.chat('gpt-4o-mini'), prompt,
        tools: { [ctx.tool.name]: ai.tool({ description: ctx.tool.description, inputSchema: ai.jsonSchema(ctx.tool.parameters) }) },
      });
    },
    cache_warm: async (prompt) => { await load(); await ai.generateText({ ...opts, model: openai.chat('gpt-5'), system: ctx.longSystem, prompt }); },
    cache_hit: async (prompt) => { await load(); await ai.generateText({ ...opts, model: openai.chat('gpt-5'), system: ctx.longSystem, prompt }); },
    embed: async (prompt) => { await load(); await ai.embed({ ...opts, model: openai.embedding('text-embedding-3-small'), value: prompt }); },
    responses: async (prompt) => { await load(); await ai.generateText({ ...opts, model: openai.responses('gpt-4o-mini'), system: 'You are a billing assistant.', prompt }); },
    responses_stream: async (prompt) => {
      await load();
      const r = ai.streamText({ ...opts, model: openai.responses('gpt-4o-mini'), prompt });
      for await (const _ of r.textStream) { /* consume */ }
    },
  };
};
