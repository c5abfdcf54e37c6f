package conformance

// scenario is one library setup the suite runs: a file in js/scenarios.
type scenario struct {
	Name     string   // the file in js/scenarios, without .cjs
	Library  string   // as the matrix names it
	Packages []string // the npm packages whose versions the matrix shows
	// Fails is the error a library that cannot run this way fails with: the
	// suite checks it still does, and the matrix says so.
	Fails string
}

var scenarios = []scenario{
	{"otel-openai", "OpenTelemetry `instrumentation-openai`", []string{"@opentelemetry/instrumentation-openai", "openai"}, ""},
	{"vercel-otel", "Vercel AI SDK 7, `@ai-sdk/otel` OpenTelemetry (GenAI spans)", []string{"ai", "@ai-sdk/otel", "@ai-sdk/openai"}, ""},
	{"vercel-legacy", "Vercel AI SDK 7, `@ai-sdk/otel` LegacyOpenTelemetry (`ai.*` spans)", []string{"ai", "@ai-sdk/otel", "@ai-sdk/openai"}, ""},
	{"vercel-v6", "Vercel AI SDK 6, its own `ai.*` spans (`experimental_telemetry`)", []string{"ai-v6", "ai-sdk-openai-v3"}, ""},
	{"openllmetry-openai", "OpenLLMetry `instrumentation-openai`", []string{"@traceloop/instrumentation-openai", "openai"}, ""},
	{"openllmetry-anthropic", "OpenLLMetry `instrumentation-anthropic` + Anthropic SDK tracing", []string{"@traceloop/instrumentation-anthropic", "@anthropic-ai/sdk"}, ""},
	{"openllmetry-langchain", "OpenLLMetry `instrumentation-langchain`", []string{"@traceloop/instrumentation-langchain", "@langchain/openai", "@langchain/core"}, ""},
	{"openinference-openai", "OpenInference `instrumentation-openai`", []string{"@arizeai/openinference-instrumentation-openai", "openai"}, ""},
	{"anthropic-sdk", "Anthropic SDK 0.x built-in tracing", []string{"@anthropic-ai/sdk"}, ""},
	{"anthropic-sdk-v1", "Anthropic SDK 1.x built-in tracing (`@anthropic-ai/sdk` installed as `anthropic-sdk-v1`)", []string{"anthropic-sdk-v1"}, ""},
	{"openllmetry-anthropic-v1", "OpenLLMetry `instrumentation-anthropic` on Anthropic SDK 1.x", []string{"@traceloop/instrumentation-anthropic", "anthropic-sdk-v1"},
		"TypeError: Cannot read properties of undefined (reading 'prototype')"},
}
