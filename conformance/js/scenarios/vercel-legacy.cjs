// Vercel AI SDK 7 with @ai-sdk/otel's LegacyOpenTelemetry integration (the
// ai.* span shape of AI SDK 6 and earlier).
'use strict';
const vercelCalls = require('./vercel-calls.cjs');

module.exports = {
  instrumentations: () => [],
  calls: (ctx) => vercelCalls(ctx, () => new (require('@ai-sdk/otel').LegacyOpenTelemetry)()),
};
