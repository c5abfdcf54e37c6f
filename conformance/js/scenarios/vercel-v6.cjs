// Vercel AI SDK 6 (installed as ai-v6, with @ai-sdk/openai 3 as
// ai-sdk-openai-v3) and its own ai.* spans (experimental_telemetry).
'use strict';
const vercelCalls = require('./vercel-calls.cjs');

module.exports = {
  instrumentations: () => [],
  calls: (ctx) => vercelCalls(ctx, null, 'ai-v6', 'ai-sdk-openai-v3'),
};
