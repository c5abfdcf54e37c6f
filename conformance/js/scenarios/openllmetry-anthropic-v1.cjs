// OpenLLMetry (@traceloop/instrumentation-anthropic) on the current
// Anthropic SDK (1.x, installed as anthropic-sdk-v1). Its patch expects
// the 0.x module layout; the suite records whether it still fails.
'use strict';
const { AnthropicInstrumentation } = require('@traceloop/instrumentation-anthropic');
const anthropicCalls = require('./anthropic-calls.cjs');

let instrumentation;
module.exports = {
  instrumentations: () => {
    instrumentation = new AnthropicInstrumentation({ traceContent: true });
    return [instrumentation];
  },
  calls: (ctx) => {
    // The alias escapes the require hook: patch the module directly.
    instrumentation.manuallyInstrument(require('anthropic-sdk-v1'));
    return anthropicCalls(ctx, 'anthropic-sdk-v1');
  },
};
