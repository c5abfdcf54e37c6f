package sqlsanitizerprocessor

import (
	"context"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/sanitize"
)

// sqlSanitizer rewrites query text attributes in place. It keeps no state
// between batches besides its configuration and counters.
type sqlSanitizer struct {
	keys           []string
	opts           sanitize.Options
	defaultDialect sanitize.Dialect
	keepParams     map[string]bool // full db.query.parameter.* keys
	fillSummary    bool
	fillOperation  bool
	logBody        bool
	tel            *telemetry
}

func newSQLSanitizer(cfg *Config, tel *telemetry) *sqlSanitizer {
	d, _ := sanitize.ParseDialect(cfg.DefaultDialect) // "" → Generic; Validate rejected unknown names
	keep := make(map[string]bool, len(cfg.KeepParameters))
	for _, p := range cfg.KeepParameters {
		keep[attrParameterPrefix+parameterName(p)] = true
	}
	return &sqlSanitizer{
		keys:           cfg.Attributes,
		opts:           cfg.options(),
		defaultDialect: d,
		keepParams:     keep,
		fillSummary:    cfg.FillSummary,
		fillOperation:  cfg.FillOperationName,
		logBody:        cfg.SanitizeLogBody,
		tel:            tel,
	}
}

func (p *sqlSanitizer) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	var t tally
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		fallback := p.dialectOf(rs.Resource().Attributes(), p.defaultDialect)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				d, changed := p.processRecord(span.Attributes(), fallback, &t)
				t.count(changed)
				events := span.Events()
				for e := 0; e < events.Len(); e++ {
					_, changed = p.processRecord(events.At(e).Attributes(), d, &t)
					t.count(changed)
				}
			}
		}
	}
	p.tel.record(ctx, signalTraces, &t)
	return td, nil
}

func (p *sqlSanitizer) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	var t tally
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		resAttrs := rl.Resource().Attributes()
		fallback := p.dialectOf(resAttrs, p.defaultDialect)
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			logs := sls.At(j).LogRecords()
			for k := 0; k < logs.Len(); k++ {
				lr := logs.At(k)
				attrs := lr.Attributes()
				d, changed := p.processRecord(attrs, fallback, &t)
				if p.logBody && (hasSystem(attrs) || hasSystem(resAttrs)) {
					changed = p.processBody(lr, d, &t) || changed
				}
				t.count(changed)
			}
		}
	}
	p.tel.record(ctx, signalLogs, &t)
	return ld, nil
}

// processRecord sanitizes the query attributes of one span, span event or
// log record; it returns the dialect it used and whether anything changed.
func (p *sqlSanitizer) processRecord(attrs pcommon.Map, fallback sanitize.Dialect, t *tally) (sanitize.Dialect, bool) {
	d := p.dialectOf(attrs, fallback)
	changed := false
	processed, partial := false, false
	var summary, operation string
	for _, key := range p.keys {
		v, ok := attrs.Get(key)
		if !ok {
			continue
		}
		res, rewritten := p.sanitizeValue(v, d)
		processed = true
		partial = partial || res.Partial
		changed = changed || rewritten
		t.query(d, res.Partial)
		if summary == "" {
			summary = res.Summary
		}
		if operation == "" {
			operation = res.Operation
		}
	}
	if processed {
		p.mark(attrs, partial)
		if p.fillSummary && summary != "" {
			putIfAbsent(attrs, attrQuerySummary, summary)
		}
		if p.fillOperation && operation != "" {
			putIfAbsent(attrs, attrOperationName, operation)
		}
	}
	if dropped := p.dropParameters(attrs); dropped > 0 {
		t.paramsDropped += int64(dropped)
		changed = true
	}
	return d, changed
}

// processBody sanitizes a log body holding query text (a string) or a map
// holding the configured query attributes; it reports whether it changed.
func (p *sqlSanitizer) processBody(lr plog.LogRecord, d sanitize.Dialect, t *tally) bool {
	body := lr.Body()
	switch body.Type() {
	case pcommon.ValueTypeStr:
		res, rewritten := p.sanitizeValue(body, d)
		t.query(d, res.Partial)
		p.mark(lr.Attributes(), res.Partial)
		return rewritten
	case pcommon.ValueTypeMap:
		_, changed := p.processRecord(body.Map(), d, t)
		return changed
	}
	return false
}

// sanitizeValue rewrites one attribute value. Values that are not text
// cannot be sanitized, so they are replaced by '?' (fail closed); slices are
// handled element by element.
func (p *sqlSanitizer) sanitizeValue(v pcommon.Value, d sanitize.Dialect) (sanitize.Result, bool) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		in := v.Str()
		res := sanitize.Sanitize(in, d, p.opts)
		if res.Text != in {
			v.SetStr(res.Text)
			return res, true
		}
		return res, false
	case pcommon.ValueTypeSlice:
		var all sanitize.Result
		rewritten := false
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			res, r := p.sanitizeValue(s.At(i), d)
			all.Partial = all.Partial || res.Partial
			rewritten = rewritten || r
			if all.Summary == "" {
				all.Summary, all.Operation = res.Summary, res.Operation
			}
		}
		return all, rewritten
	}
	v.SetStr("?")
	return sanitize.Result{Text: "?", Partial: true}, true
}

// mark records the outcome. An upstream "partial" stays partial: text that
// was already cut cannot become whole again. Any other existing value is
// overwritten, so a forged "full" never vouches for unsanitized text.
func (p *sqlSanitizer) mark(attrs pcommon.Map, partial bool) {
	if prev, ok := attrs.Get(attrSanitization); ok && prev.Type() == pcommon.ValueTypeStr && prev.Str() == outcomePartial {
		partial = true
	}
	outcome := outcomeFull
	if partial {
		outcome = outcomePartial
	}
	attrs.PutStr(attrSanitization, outcome)
}

// dropParameters removes db.query.parameter.* attributes that were not
// opted in and returns how many it removed.
func (p *sqlSanitizer) dropParameters(attrs pcommon.Map) int {
	dropped := 0
	attrs.RemoveIf(func(k string, _ pcommon.Value) bool {
		if strings.HasPrefix(k, attrParameterPrefix) && !p.keepParams[k] {
			dropped++
			return true
		}
		return false
	})
	return dropped
}

// dialectOf picks the dialect from db.system.name, then db.system.
func (p *sqlSanitizer) dialectOf(attrs pcommon.Map, fallback sanitize.Dialect) sanitize.Dialect {
	for _, key := range [...]string{attrSystemName, attrSystem} {
		if v, ok := attrs.Get(key); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			return sanitize.DialectForSystem(v.Str())
		}
	}
	return fallback
}

func hasSystem(attrs pcommon.Map) bool {
	_, a := attrs.Get(attrSystemName)
	_, b := attrs.Get(attrSystem)
	return a || b
}

func putIfAbsent(attrs pcommon.Map, key, value string) {
	if _, ok := attrs.Get(key); !ok {
		attrs.PutStr(key, value)
	}
}
