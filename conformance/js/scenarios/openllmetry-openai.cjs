// OpenLLMetry (@traceloop/instrumentation-openai) on the official openai client.
'use strict';
const { OpenAIInstrumentation } = require('@traceloop/instrumentation-openai');
const openaiCalls = require('./openai-calls.cjs');

module.exports = {
  instrumentations: () => [new OpenAIInstrumentation({ traceContent: true })],
  calls: (ctx) => openaiCalls(ctx, { responses: true }),
};
