package providers

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// maxEventLine bounds one line of an event stream.
const maxEventLine = 4 << 20

// event is one server-sent event: its name (empty when the stream sends
// only data, as Chat Completions does) and its data lines joined.
type event struct {
	name string
	data string
}

// eventReader reads server-sent events.
type eventReader struct {
	sc *bufio.Scanner
}

func newEventReader(r io.Reader) *eventReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	return &eventReader{sc: sc}
}

// errStreamEnded: the stream closed before the API's final event, so the
// answer is incomplete. Another attempt may succeed.
var errStreamEnded = errors.New("stream ended before its final event")

// next returns the next event with data. At the end of the stream it
// returns errStreamEnded: callers return when they see their final event.
func (r *eventReader) next() (event, error) {
	var ev event
	var data []string
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			ev = event{}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.name = value
		case "data":
			data = append(data, value)
		}
		// Comments (":…"), id and retry lines are not needed.
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return event{}, errTooLarge
		}
		return event{}, err
	}
	if len(data) > 0 {
		ev.data = strings.Join(data, "\n")
		return ev, nil
	}
	return event{}, errStreamEnded
}
