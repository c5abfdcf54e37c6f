// OpenInference (@arizeai/openinference-instrumentation-openai) on the
// official openai client.
'use strict';
const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
const openaiCalls = require('./openai-calls.cjs');

module.exports = {
  instrumentations: () => [new OpenAIInstrumentation()],
  calls: (ctx) => openaiCalls(ctx, { responses: true }),
};
