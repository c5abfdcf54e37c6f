// Package otlptest sends OTLP requests no SDK would: bodies that are not
// OTLP, to test how a collector refuses and counts them.
package otlptest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// SendFlaggedTraces sends body, as it is, as the message of an OTLP/gRPC
// trace export marked compressed with encoding (grpc-encoding), as a
// broken sender would, to addr in plaintext, and returns the answer's
// status code. grpc-go cannot send a message that fails to decompress, so
// this speaks gRPC's framing over HTTP/2 itself.
func SendFlaggedTraces(addr, token, encoding string, body []byte) (codes.Code, error) {
	// gRPC in plaintext is HTTP/2 without TLS (h2c, prior knowledge).
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &protocols}
	defer tr.CloseIdleConnections()
	// A gRPC message: the compressed flag, the length, the bytes.
	frame := make([]byte, 5, 5+len(body))
	frame[0] = 1
	binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
	frame = append(frame, body...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+traceExport, bytes.NewReader(frame))
	if err != nil {
		return codes.Unknown, fmt.Errorf("otlptest: request: %w", err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("Grpc-Encoding", encoding)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return codes.Unknown, fmt.Errorf("otlptest: send to %s: %w", addr, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	// A refusal before any message is a trailers-only answer: the status
	// is in the headers.
	st := resp.Trailer.Get("Grpc-Status")
	if st == "" {
		st = resp.Header.Get("Grpc-Status")
	}
	n, err := strconv.Atoi(st)
	if err != nil {
		return codes.Unknown, fmt.Errorf("otlptest: answer without a gRPC status (HTTP %d)", resp.StatusCode)
	}
	return codes.Code(n), nil
}
