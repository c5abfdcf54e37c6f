// The Anthropic TypeScript SDK's own tracing (on by default), with content.
'use strict';
const anthropicCalls = require('./anthropic-calls.cjs');

module.exports = {
  instrumentations: () => {
    process.env.ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE = 'content';
    return [];
  },
  calls: anthropicCalls,
};
