package otlpcheckextension

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
)

// GetGRPCServerOptions counts OTLP/gRPC requests refused as malformed.
// gRPC decodes a request before any interceptor runs, the authenticator's
// included, so only a stats handler sees these refusals.
func (c *otlpCheck) GetGRPCServerOptions(context.Context) ([]grpc.ServerOption, error) {
	return []grpc.ServerOption{grpc.StatsHandler(grpcCounter{c})}, nil
}

// undecodable are the beginnings of the errors grpc-go (v1.83) answers a
// request body with that it could not read or decode: too large,
// undecompressable or in an unknown encoding, not protobuf of the
// method's type.
var undecodable = []string{
	"grpc: Decompressor is not installed",
	"grpc: error unmarshalling request",
	"grpc: received message larger than max",
	"grpc: received message after decompression larger than max",
	"grpc: message after decompression larger than max",
	"grpc: failed to decompress",
}

type grpcCounter struct{ c *otlpCheck }

func (grpcCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (grpcCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (grpcCounter) HandleConn(context.Context, stats.ConnStats) {}

func (g grpcCounter) HandleRPC(ctx context.Context, s stats.RPCStats) {
	end, ok := s.(*stats.End)
	if !ok || end.Error == nil {
		return
	}
	msg := status.Convert(end.Error).Message()
	for _, prefix := range undecodable {
		if strings.HasPrefix(msg, prefix) {
			g.c.account.Refuse(g.c.grpcTenant(ctx), completeness.RequestMalformed)
			return
		}
	}
}

// grpcTenant asks the configured authenticator whose credentials the
// request carries; the receiver never did.
func (c *otlpCheck) grpcTenant(ctx context.Context) string {
	if c.resolver == nil {
		return conventions.UnknownTenant
	}
	md, _ := metadata.FromIncomingContext(ctx)
	t, err := c.resolver.TenantOf(ctx, md)
	if err != nil || !conventions.ValidTenant(t) {
		return conventions.UnknownTenant
	}
	return t
}
