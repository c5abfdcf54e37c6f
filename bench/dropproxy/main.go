// Command dropproxy stands between an application and docket collector and
// drops a share of the spans on purpose, as a lossy SDK or network would:
// the test of whether reconciliation reports calls lost before Docket. It
// takes OTLP/gRPC, drops each span whose ID (or, with -by trace, whose
// trace's ID) hashes below the share, so the drop is spread evenly and
// independent of what the span is, forwards the rest, and at exit prints
// how many spans, and how many LLM call spans (spans the ledger takes as
// one model call each), it dropped: the truth reconciliation's missing
// share is checked against.
//
//	dropproxy -listen 127.0.0.1:14318 -upstream 127.0.0.1:14317 -drop 0.01
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/docketlabs/docket/internal/conventions"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:14318", "OTLP/gRPC address to take spans on")
	upstream := flag.String("upstream", "127.0.0.1:4317", "OTLP/gRPC address to forward to")
	drop := flag.Float64("drop", 0.01, "share of spans (or traces) to drop, 0 to 1")
	by := flag.String("by", "span", "span: drop spans independently, as an SDK's full queue does; trace: drop whole traces")
	flag.Parse()
	if err := run(*listen, *upstream, *drop, *by); err != nil {
		slog.Error("dropproxy", "err", err)
		os.Exit(1)
	}
}

type proxy struct {
	ptraceotlp.UnimplementedGRPCServer
	up                          ptraceotlp.GRPCClient
	threshold                   uint64
	byTrace                     bool
	spans, calls, dropped, drop atomic.Int64
}

func run(listen, upstream string, share float64, by string) error {
	if share < 0 || share > 1 {
		return fmt.Errorf("-drop %v is not a share between 0 and 1", share)
	}
	if by != "span" && by != "trace" {
		return fmt.Errorf("-by %q is neither span nor trace", by)
	}
	conn, err := grpc.NewClient(upstream, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("upstream: %w", err)
	}
	defer func() { _ = conn.Close() }()
	p := &proxy{up: ptraceotlp.NewGRPCClient(conn), threshold: uint64(share * float64(^uint64(0))), byTrace: by == "trace"}
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	ptraceotlp.RegisterGRPCServer(srv, p)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); srv.GracefulStop() }()
	if err := srv.Serve(l); err != nil {
		return err
	}
	fmt.Printf("dropproxy: spans %d, of them LLM call spans %d; dropped spans %d, of them LLM call spans %d\n",
		p.spans.Load(), p.calls.Load(), p.dropped.Load(), p.drop.Load())
	return nil
}

// Export forwards the spans it keeps; the sender sees upstream's answer.
func (p *proxy) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	td := req.Traces()
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool {
				role, _ := conventions.Read(ss.Scope().Name(), s.Attributes()).Classify(s.Name())
				call := role == conventions.RoleCall
				p.spans.Add(1)
				if call {
					p.calls.Add(1)
				}
				h := fnv.New64a()
				if sid, tid := s.SpanID(), s.TraceID(); p.byTrace {
					_, _ = h.Write(tid[:])
				} else {
					_, _ = h.Write(sid[:])
				}
				if h.Sum64() >= p.threshold {
					return false
				}
				p.dropped.Add(1)
				if call {
					p.drop.Add(1)
				}
				return true
			})
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	return p.up.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
}
