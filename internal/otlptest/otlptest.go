// Package otlptest sends OTLP requests no SDK would: bodies that are not
// OTLP, to test how a collector refuses and counts them.
package otlptest

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// traceExport is the OTLP/gRPC method of trace exports.
const traceExport = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

// SendRawTraces sends body, as it is, as the message of an OTLP/gRPC trace
// export to addr in plaintext, with the bearer token unless it is empty,
// and returns the answer's status code.
func SendRawTraces(addr, token string, body []byte) (codes.Code, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return codes.Unknown, fmt.Errorf("otlptest: connect %s: %w", addr, err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	err = conn.Invoke(ctx, traceExport, body, new([]byte), grpc.ForceCodecV2(rawCodec{}))
	return status.Code(err), nil
}

// rawCodec sends a []byte message as it is, under the protobuf codec's
// name so that the server decodes it as protobuf.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawCodec) Unmarshal(mem.BufferSlice, any) error { return nil }
func (rawCodec) Name() string                         { return "proto" }
