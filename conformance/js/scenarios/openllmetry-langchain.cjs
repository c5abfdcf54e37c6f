// OpenLLMetry's LangChain instrumentation (@traceloop/instrumentation-langchain)
// on @langchain/openai.
'use strict';
const { LangChainInstrumentation } = require('@traceloop/instrumentation-langchain');

let instrumentation;
module.exports = {
  instrumentations: () => {
    instrumentation = new LangChainInstrumentation({ traceContent: true });
    return [instrumentation];
  },
  calls: (ctx) => {
    // LangChain is ESM-first; its callback manager is patched directly.
    instrumentation.manuallyInstrument({ callbackManagerModule: require('@langchain/core/callbacks/manager') });
    const { ChatOpenAI, OpenAIEmbeddings } = require('@langchain/openai');
    const configuration = { baseURL: ctx.openaiBaseURL };
    const chat = (model) => new ChatOpenAI({ model, apiKey: ctx.apiKey, configuration, maxRetries: 0 });
    return {
      chat: (prompt) => chat('gpt-4o-mini').invoke([['system', 'You are a billing assistant.'], ['human', prompt]]),
      stream: async (prompt) => {
        for await (const _ of await chat('gpt-4o-mini').stream([['human', prompt]])) { /* consume */ }
      },
      tool: (prompt) => chat('gpt-4o-mini').bindTools([{ type: 'function', function: ctx.tool }]).invoke([['human', prompt]]),
      cache_warm: (prompt) => chat('gpt-5').invoke([['system', ctx.longSystem], ['human', prompt]]),
      cache_hit: (prompt) => chat('gpt-5').invoke([['system', ctx.longSystem], ['human', prompt]]),
      embed: (prompt) => new OpenAIEmbeddings({ model: 'text-embedding-3-small', apiKey: ctx.apiKey, configuration, maxRetries: 0 }).embedQuery(prompt),
    };
  },
};
