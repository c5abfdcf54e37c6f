package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Scrub masks the quoted text in an engine's error message. ClickHouse
// quotes the failing query, with its bound literals, and the input it could
// not parse: an end-user reference someone searched for, or a row's values.
// Error messages reach logs, so each quoted span becomes '?'; backquoted
// identifiers, error codes and names stay, which is what diagnosis needs.
func Scrub(msg string) string {
	var b strings.Builder
	b.Grow(len(msg))
	for i := 0; i < len(msg); i++ {
		q := msg[i]
		if q != '\'' && q != '"' {
			b.WriteByte(q)
			continue
		}
		// Skip to the closing quote, honouring backslash escapes; an
		// unterminated quote masks the rest.
		j := i + 1
		for ; j < len(msg) && msg[j] != q; j++ {
			if msg[j] == '\\' {
				j++
			}
		}
		b.WriteByte(q)
		b.WriteByte('?')
		b.WriteByte(q)
		i = j
	}
	return b.String()
}

// ScrubError is err with its message scrubbed. Only cancellation and
// deadlines stay reachable with errors.Is; the original error, whose
// message carries the quoted text, is not kept.
func ScrubError(err error) error {
	if err == nil {
		return nil
	}
	msg := Scrub(err.Error())
	for _, sentinel := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, sentinel) {
			return fmt.Errorf("%s (%w)", msg, sentinel)
		}
	}
	return errors.New(msg)
}
