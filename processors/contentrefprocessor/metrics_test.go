package contentrefprocessor

// The counters' names as the collector exports them (metadata.yaml, with
// mdatagen's otelcol_ prefix): the tests read them here.
const (
	metricItems          = "otelcol_processor_contentref_items"
	metricBytes          = "otelcol_processor_contentref_bytes"
	metricRecords        = "otelcol_processor_contentref_records"
	metricPlanted        = "otelcol_processor_contentref_planted_attributes"
	metricUnknown        = "otelcol_processor_contentref_unknown_keys"
	metricDropped        = "otelcol_processor_contentref_dropped_keys"
	metricDroppedRecords = "otelcol_processor_contentref_dropped_records"
)
