package proctest

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortAvoidsEphemeralRange: a port in the kernel's ephemeral range
// can be taken by any outgoing connection before the subprocess binds it,
// which made a fleet test fail with "address already in use".
func TestFreePortAvoidsEphemeralRange(t *testing.T) {
	lo, hi := portPool()
	seen := map[string]bool{}
	for range 200 {
		p := FreePort(t)
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		if n < lo || n >= hi {
			t.Fatalf("port %d outside [%d, %d)", n, lo, hi)
		}
		if seen[p] {
			t.Fatalf("port %s handed out twice", p)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Fatalf("port %s is not free: %v", p, err)
		}
		_ = ln.Close()
	}
}
