// Runs one conformance scenario: an instrumented LLM client calling
// fakeprovider, exporting OTLP to a docket collector. It also keeps every
// span and log record it exported (the library's own output, before the
// collector changed anything) and writes them to CONF_RAW_FILE, so the Go
// driver can tell a library's gap (the value is nowhere on its spans) from
// an extraction defect (it is there, and the ledger missed it).
//
// Environment: CONF_SCENARIO (a file in scenarios/), CONF_OTLP_ENDPOINT,
// CONF_OPENAI_BASE_URL, CONF_ANTHROPIC_BASE_URL, CONF_RAW_FILE.
// Stdout: one JSON line per call {call, trace_id, canary, error}.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const api = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { TracerProvider, BatchSpanProcessor, SimpleSpanProcessor, InMemorySpanExporter } = require('@opentelemetry/sdk-trace');
const { LoggerProvider, BatchLogRecordProcessor, SimpleLogRecordProcessor, InMemoryLogRecordExporter } = require('@opentelemetry/sdk-logs');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`harness: ${k} is not set`);
  return v;
};
const scenarioName = env('CONF_SCENARIO');
const otlp = env('CONF_OTLP_ENDPOINT');

// Generous export timeouts: a loaded test machine must not make a run fail.
const resource = resourceFromAttributes({ 'service.name': `conformance-${scenarioName}` });
const rawSpans = new InMemorySpanExporter();
const rawLogs = new InMemoryLogRecordExporter();
const tracerProvider = new TracerProvider({
  resource,
  spanProcessors: [
    new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${otlp}/v1/traces`, timeoutMillis: 60000 }), scheduledDelayMillis: 200 }),
    new SimpleSpanProcessor({ exporter: rawSpans }),
  ],
});
const loggerProvider = new LoggerProvider({
  resource,
  processors: [
    new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${otlp}/v1/logs`, timeoutMillis: 60000 }), scheduledDelayMillis: 200 }),
    new SimpleLogRecordProcessor({ exporter: rawLogs }),
  ],
});
api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.trace.setGlobalTracerProvider(tracerProvider);
if (api.logs) api.logs.setGlobalLoggerProvider(loggerProvider);
try {
  // Instrumentations built on the older logs API read its global.
  require('@opentelemetry/api-logs').logs.setGlobalLoggerProvider(loggerProvider);
} catch { /* not installed: nothing reads it */ }

// What every scenario's calls share: where the provider is, the prompts.
const LONG_WORDS = 'policy account billing refund invoice period payment review support contact'.split(' ');
const ctx = {
  openaiBaseURL: env('CONF_OPENAI_BASE_URL'),
  anthropicBaseURL: env('CONF_ANTHROPIC_BASE_URL'),
  apiKey: 'sk-conformance-not-a-secret',
  tracerProvider,
  loggerProvider,
  // A system prompt long enough (> 1,024 tokens) for the prompt cache.
  longSystem: Array.from({ length: 1300 }, (_, i) => LONG_WORDS[(i * 7) % LONG_WORDS.length]).join(' '),
  tool: {
    name: 'lookup_invoice',
    description: 'Look up an invoice by its number.',
    parameters: {
      type: 'object',
      properties: { invoice_number: { type: 'string', description: 'The invoice number.' } },
      required: ['invoice_number'],
      additionalProperties: false,
    },
  },
};

async function main() {
  const scenario = require(path.join(__dirname, 'scenarios', `${scenarioName}.cjs`));
  registerInstrumentations({ instrumentations: scenario.instrumentations(ctx), tracerProvider, loggerProvider });
  const calls = scenario.calls(ctx);
  const tracer = api.trace.getTracer('conformance-app');
  for (const [name, run] of Object.entries(calls)) {
    // Each call runs under an application span of its own trace, as in an
    // app that serves a request; the driver finds a call's rows by trace.
    // The same canary every run keeps prompts, answers and token counts
    // identical from run to run (the ledger is new each run); the closing
    // mark keeps one call's canary from being a prefix of another's.
    const canary = `Canary-${scenarioName}-${name}-Z`;
    const prompt = `Customer ${canary} asks about invoice INV-2041 and the refund policy.`;
    const line = { call: name, canary };
    await tracer.startActiveSpan(`app ${name}`, { root: true }, async (span) => {
      line.trace_id = span.spanContext().traceId;
      try {
        await run(prompt);
      } catch (e) {
        line.error = String(e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e);
      } finally {
        span.end();
      }
    });
    process.stdout.write(JSON.stringify(line) + '\n');
  }
  const attrs = (a) => Object.fromEntries(Object.entries(a || {}));
  const raw = {
    spans: rawSpans.getFinishedSpans().map((s) => ({
      trace_id: s.spanContext().traceId,
      span_id: s.spanContext().spanId,
      parent_span_id: (s.parentSpanContext && s.parentSpanContext.spanId) || '',
      name: s.name,
      scope: s.instrumentationScope.name,
      scope_version: s.instrumentationScope.version || '',
      attributes: attrs(s.attributes),
      events: s.events.map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
    })),
    logs: rawLogs.getFinishedLogRecords().map((l) => ({
      trace_id: (l.spanContext && l.spanContext.traceId) || '',
      span_id: (l.spanContext && l.spanContext.spanId) || '',
      event_name: l.eventName || '',
      body: l.body === undefined ? null : l.body,
      attributes: attrs(l.attributes),
    })),
  };
  fs.writeFileSync(env('CONF_RAW_FILE'), JSON.stringify(raw));
  // An export the collector did not take fails the scenario, loudly.
  await tracerProvider.forceFlush();
  await loggerProvider.forceFlush();
  await tracerProvider.shutdown();
  await loggerProvider.shutdown();
}

main().catch((e) => {
  process.stderr.write(`harness: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
