// OpenLLMetry (@traceloop/instrumentation-anthropic) on the Anthropic SDK,
// whose own tracing stays on, as it is by default: two instrumentations
// describe every call.
'use strict';
const { AnthropicInstrumentation } = require('@traceloop/instrumentation-anthropic');
const anthropicCalls = require('./anthropic-calls.cjs');

module.exports = {
  instrumentations: () => [new AnthropicInstrumentation({ traceContent: true })],
  calls: anthropicCalls,
};
