package contentrefprocessor

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/docketlabs/docket/internal/conventions"
)

// keptEventAttr reports whether an attribute of a content event stays on
// the telemetry: metadata (content keys are moved separately), our own
// attributes and the few structural fields of the message events.
func keptEventAttr(k string) bool {
	return slices.Contains(conventions.ContentEventMetadata, k) ||
		slices.ContainsFunc(conventions.MetadataNamespaces, func(p string) bool { return strings.HasPrefix(k, p) })
}

// Attributes the processor writes.
const (
	AttrStatus        = conventions.ContentStatus
	AttrBytes         = conventions.ContentBytes
	AttrBodyRef       = conventions.ContentBodyRef
	AttrAttributesRef = conventions.ContentAttributesRef
	// attrItemStatusPrefix + source explains a content item that was not
	// stored (source: the content key, "body" or "attributes").
	attrItemStatusPrefix = conventions.ContentItemStatusPrefix
)

// Content statuses. A span or log record gets one summary (AttrStatus):
// the status all its items share; partial when some were stored and some
// not; otherwise, with no item stored, the most severe in the order
// store_unavailable > over_quota > over_limit > invalid_tenant >
// not_captured.
const (
	StatusStored           = "stored"
	StatusPartial          = "partial"
	StatusNotCaptured      = "not_captured"
	StatusOverLimit        = "over_limit"
	StatusOverQuota        = "over_quota"
	StatusInvalidTenant    = "invalid_tenant"
	StatusStoreUnavailable = "store_unavailable"
)

// statuses lists every status, in order of severity for the summary.
var statuses = []string{StatusStored, StatusNotCaptured, StatusInvalidTenant, StatusOverLimit, StatusOverQuota, StatusStoreUnavailable, StatusPartial}

func severity(s string) int {
	for i, x := range statuses {
		if x == s {
			return i
		}
	}
	return -1
}

// summarize combines item statuses into the record's status.
func summarize(items []string) string {
	if len(items) == 0 {
		return ""
	}
	stored, worst, same := false, "", true
	for _, s := range items {
		same = same && s == items[0]
		if s == StatusStored || s == StatusPartial {
			stored = true
		}
		if s != StatusStored && severity(s) > severity(worst) {
			worst = s
		}
	}
	switch {
	case same:
		return items[0]
	case stored:
		return StatusPartial
	}
	return worst
}

// jsonBuilder serializes attribute values as JSON up to a limit. Past the
// limit it stops appending and only counts, so an oversized value costs no
// memory; a zero limit measures without building.
type jsonBuilder struct {
	buf   []byte
	n     int64
	limit int64
}

func (b *jsonBuilder) write(p ...byte) {
	b.n += int64(len(p))
	if b.n <= b.limit {
		b.buf = append(b.buf, p...)
	}
}

func (b *jsonBuilder) writeString(s string) {
	b.n += int64(len(s))
	if b.n <= b.limit {
		b.buf = append(b.buf, s...)
	}
}

func (b *jsonBuilder) over() bool { return b.n > b.limit }

// str writes a JSON string; invalid UTF-8 becomes U+FFFD, since JSON
// cannot carry it.
func (b *jsonBuilder) str(s string) {
	b.write('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
		}
		b.writeString(s[start:i])
		switch c {
		case '"', '\\':
			b.write('\\', c)
		case '\n':
			b.write('\\', 'n')
		case '\r':
			b.write('\\', 'r')
		case '\t':
			b.write('\\', 't')
		default:
			if c < 0x20 {
				const hex = "0123456789abcdef"
				b.write('\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			} else {
				b.writeString("\ufffd")
			}
		}
		i++
		start = i
	}
	b.writeString(s[start:])
	b.write('"')
}

func (b *jsonBuilder) value(v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		b.str(v.Str())
	case pcommon.ValueTypeInt:
		b.writeString(strconv.FormatInt(v.Int(), 10))
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			b.str(strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			b.writeString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case pcommon.ValueTypeBool:
		b.writeString(strconv.FormatBool(v.Bool()))
	case pcommon.ValueTypeBytes:
		b.str(base64.StdEncoding.EncodeToString(v.Bytes().AsRaw()))
	case pcommon.ValueTypeMap:
		b.write('{')
		first := true
		for k, mv := range v.Map().All() {
			if !first {
				b.write(',')
			}
			first = false
			b.str(k)
			b.write(':')
			b.value(mv)
		}
		b.write('}')
	case pcommon.ValueTypeSlice:
		b.write('[')
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if i > 0 {
				b.write(',')
			}
			b.value(s.At(i))
		}
		b.write(']')
	default:
		b.writeString("null")
	}
}

// valueContent returns a value as content: a string as it is (it may be
// JSON or plain text), anything else as JSON. With limit 0 it only
// measures. over is set when the content is larger than limit.
func valueContent(v pcommon.Value, limit int64) (content []byte, size int64, over bool) {
	if v.Type() == pcommon.ValueTypeStr {
		s := v.Str()
		size = int64(len(s))
		if size > limit {
			return nil, size, true
		}
		return []byte(s), size, false
	}
	b := jsonBuilder{limit: limit}
	b.value(v)
	return b.buf, b.n, b.over()
}

// attrsContent returns the selected attributes as one JSON object
// of key to value.
func attrsContent(attrs pcommon.Map, selected func(string) bool, limit int64) ([]byte, int64, bool) {
	b := jsonBuilder{limit: limit}
	b.write('{')
	first := true
	for k, v := range attrs.All() {
		if !selected(k) {
			continue
		}
		if !first {
			b.write(',')
		}
		first = false
		b.str(k)
		b.write(':')
		b.value(v)
	}
	b.write('}')
	return b.buf, b.n, b.over()
}
