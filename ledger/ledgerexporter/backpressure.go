package ledgerexporter

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/docketlabs/docket/completeness"
)

// guardedTraces answers a call the queue cannot take at once, before
// anything is accepted, with the OTLP backpressure answer: a gRPC status
// with RetryInfo, which the OTLP receiver passes on as is over gRPC and
// turns into 429/503 with Retry-After over HTTP (otlpreceiver v0.161.0
// errors.GetHTTPStatusCodeFromStatus and writeStatusResponse). Without it
// a full queue either blocks the sender (block_on_overflow) or answers 503
// with no Retry-After, which SDKs retry at once.
type guardedTraces struct {
	exporter.Traces
	guard      *queueGuard
	storageID  *component.ID
	retryAfter time.Duration
	refused    metric.Int64Counter
	account    *completeness.Account
	// tenantOf counts a refused request's spans per tenant.
	tenantOf func(ptrace.Traces) map[string]int64
}

var (
	reasonQueueFull   = metric.WithAttributes(attribute.String("reason", "queue_full"))
	reasonStorageFull = metric.WithAttributes(attribute.String("reason", "queue_storage_full"))
	reasonStorage     = metric.WithAttributes(attribute.String("reason", "queue_storage_error"))
)

func (g *guardedTraces) Start(ctx context.Context, host component.Host) error {
	return g.Traces.Start(ctx, g.guard.wrapHost(host, g.storageID))
}

func (g *guardedTraces) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if err := g.guard.refusal(ctx); err != nil {
		g.refused.Add(ctx, int64(td.SpanCount()), reasonStorageFull)
		g.account.AddAll(g.tenantOf(td), completeness.RefusedRetry)
		return g.backpressure(codes.Unavailable, err)
	}
	ctx, t := withTally(ctx)
	err := g.Traces.ConsumeTraces(ctx, td)
	switch {
	case err == nil:
		t.record(g.account, completeness.Received, completeness.Flagged)
		return nil
	case consumererror.IsPermanent(err):
		t.record(g.account, completeness.RefusedInvalid)
		return err
	case errors.Is(err, exporterhelper.ErrQueueIsFull):
		g.refused.Add(ctx, int64(td.SpanCount()), reasonQueueFull)
		g.account.AddAll(g.tenantOf(td), completeness.RefusedRetry)
		return g.backpressure(codes.ResourceExhausted, err)
	default:
		g.refused.Add(ctx, int64(td.SpanCount()), reasonStorage)
		g.account.AddAll(g.tenantOf(td), completeness.RefusedRetry)
		return g.backpressure(codes.Unavailable, err)
	}
}

// backpressure is a retryable status carrying when to retry. The OTLP
// spec reads RESOURCE_EXHAUSTED as retryable only with RetryInfo.
func (g *guardedTraces) backpressure(code codes.Code, err error) error {
	st, derr := status.New(code, err.Error()).WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(g.retryAfter)})
	if derr != nil {
		return status.Error(code, err.Error())
	}
	return st.Err()
}
