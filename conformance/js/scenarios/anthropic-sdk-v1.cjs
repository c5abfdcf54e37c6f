// The built-in tracing of the current Anthropic TypeScript SDK (1.x,
// installed under the alias anthropic-sdk-v1), with content.
'use strict';
const anthropicCalls = require('./anthropic-calls.cjs');

module.exports = {
  instrumentations: () => {
    process.env.ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE = 'content';
    return [];
  },
  calls: (ctx) => anthropicCalls(ctx, 'anthropic-sdk-v1'),
};
