package providers

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzDecode feeds arbitrary answers to every API's JSON and stream
// decoders: never a panic; either a result with an assistant message, or
// an error of a known kind.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"id":"msg_1","type":"message","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"x\"}}]}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":-1}\n\n"))
	f.Add([]byte("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"incomplete\",\"output\":[]}}\n\n"))
	wires := []wire{chatWire{}, responsesWire{}, messagesWire{}}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, w := range wires {
			for _, stream := range []bool{false, true} {
				var res Result
				var err error
				if stream {
					res, err = w.decodeStream(newEventReader(strings.NewReader(string(body))), time.Now())
				} else {
					res, err = w.decode(body)
				}
				if err == nil {
					if res.Output.Role != "assistant" || res.Output.Parts == nil {
						t.Fatalf("%T stream=%v: result without an assistant message: %+v", w, stream, res)
					}
					continue
				}
				var apiErr *APIError
				if !errors.Is(err, ErrBadResponse) && !errors.Is(err, errStreamEnded) && !errors.Is(err, errTooLarge) && !errors.As(err, &apiErr) {
					t.Fatalf("%T stream=%v: unexpected error %v", w, stream, err)
				}
			}
		}
	})
}
