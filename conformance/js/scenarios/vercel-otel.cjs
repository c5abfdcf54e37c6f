// Vercel AI SDK 7 with @ai-sdk/otel's OpenTelemetry integration (OTel
// GenAI span shape).
'use strict';
const vercelCalls = require('./vercel-calls.cjs');

module.exports = {
  instrumentations: () => [],
  calls: (ctx) => vercelCalls(ctx, () => new (require('@ai-sdk/otel').OpenTelemetry)()),
};
