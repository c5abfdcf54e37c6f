// @opentelemetry/instrumentation-openai (OTel GenAI conventions; content as
// log records) on the official openai client.
'use strict';
const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
const openaiCalls = require('./openai-calls.cjs');

module.exports = {
  instrumentations: () => [new OpenAIInstrumentation({ captureMessageContent: true })],
  calls: (ctx) => openaiCalls(ctx, { responses: true }),
};
