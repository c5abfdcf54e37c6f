package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// eventStream writes named server-sent events ("event: …\ndata: …\n\n"),
// as the Responses and Messages APIs stream.
type eventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startEventStream(w http.ResponseWriter) *eventStream {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &eventStream{w: w, rc: http.NewResponseController(w)}
}

// send writes one event; an error means the client went away.
func (s *eventStream) send(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		return err
	}
	return s.rc.Flush()
}
