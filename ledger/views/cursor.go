package views

import (
	"encoding/base64"
	"encoding/binary"
	"time"
)

// cursor is the position after the last call of a page: its sort key.
type cursor struct {
	StartTime               time.Time
	Tenant, TraceID, SpanID string
}

const (
	cursorVersion = 1
	// maxCursorLen bounds an encoded cursor: three strings of at most
	// maxCursorField bytes, their lengths and a time, in base64.
	maxCursorField = 4096
	maxCursorLen   = (1+binary.MaxVarintLen64+3*(binary.MaxVarintLen64+maxCursorField))*4/3 + 4
)

// encode makes the opaque page token: base64url of a version byte, the
// start time in Unix nanoseconds and the three key strings, length-prefixed,
// so any bytes in a tenant name survive the round trip.
func (c cursor) encode() string {
	b := []byte{cursorVersion}
	b = binary.AppendVarint(b, c.StartTime.UnixNano())
	for _, s := range []string{c.Tenant, c.TraceID, c.SpanID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor parses a token made by encode; anything else is ErrInvalid.
func decodeCursor(s string) (cursor, error) {
	bad := invalid("cursor: not a page token of this list")
	if len(s) > maxCursorLen {
		return cursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || b[0] != cursorVersion {
		return cursor{}, bad
	}
	b = b[1:]
	nanos, n := binary.Varint(b)
	if n <= 0 {
		return cursor{}, bad
	}
	b = b[n:]
	var fields [3]string
	for i := range fields {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > maxCursorField || l > uint64(len(b)-n) {
			return cursor{}, bad
		}
		fields[i] = string(b[n : n+int(l)])
		b = b[n+int(l):]
	}
	t := time.Unix(0, nanos).UTC()
	if len(b) != 0 || t.Before(minTime) || t.After(maxTime) {
		return cursor{}, bad
	}
	return cursor{StartTime: t, Tenant: fields[0], TraceID: fields[1], SpanID: fields[2]}, nil
}
