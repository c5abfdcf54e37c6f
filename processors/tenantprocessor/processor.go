package tenantprocessor

import (
	"context"
	"fmt"
	"net"
	"strings"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docketlabs/docket/internal/conventions"
)

type tenantProcessor struct {
	cfg *Config
	tel *telemetry
}

// resource is one resource of a request and how many records it holds.
type resource struct {
	res     pcommon.Resource
	records int64
}

func (p *tenantProcessor) processTraces(ctx context.Context, td ptrace.Traces) (ptrace.Traces, error) {
	rss := td.ResourceSpans()
	rs := make([]resource, rss.Len())
	for i := range rss.Len() {
		var n int
		for _, ss := range rss.At(i).ScopeSpans().All() {
			n += ss.Spans().Len()
		}
		rs[i] = resource{res: rss.At(i).Resource(), records: int64(n)}
	}
	return td, p.stamp(ctx, signalTraces, rs)
}

func (p *tenantProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	rls := ld.ResourceLogs()
	rs := make([]resource, rls.Len())
	for i := range rls.Len() {
		var n int
		for _, sl := range rls.At(i).ScopeLogs().All() {
			n += sl.LogRecords().Len()
		}
		rs[i] = resource{res: rls.At(i).Resource(), records: int64(n)}
	}
	return ld, p.stamp(ctx, signalLogs, rs)
}

// processMetrics stamps metrics too: the ledger exporter counts an
// application's own dropped-span count under the tenant of its resource.
func (p *tenantProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	rms := md.ResourceMetrics()
	rs := make([]resource, rms.Len())
	for i := range rms.Len() {
		var n int
		for _, sm := range rms.At(i).ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				n += dataPoints(m)
			}
		}
		rs[i] = resource{res: rms.At(i).Resource(), records: int64(n)}
	}
	return md, p.stamp(ctx, signalMetrics, rs)
}

func dataPoints(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

// stamp sets the tenant of every resource of one request, or refuses the
// request whole: a refused request stores nothing, so the sender's error
// covers exactly what was lost.
func (p *tenantProcessor) stamp(ctx context.Context, sig signal, rs []resource) error {
	var total int64
	for _, r := range rs {
		total += r.records
	}
	tenant, from, err := p.identity(ctx)
	if err != nil {
		p.tel.add(ctx, sig, outcomeUnauthenticated, conventions.UnknownTenant, total)
		return err
	}
	switch from {
	case fromRelay:
		return p.relayed(ctx, sig, rs, total)
	case fromSender:
		for _, r := range rs {
			a := r.res.Attributes()
			a.Remove(conventions.TenantClaimedAttribute)
			a.PutStr(conventions.TenantAttribute, conventions.Tenant(a, p.cfg.DefaultTenant))
		}
		p.tel.add(ctx, sig, outcomeSenderAttribute, "", total)
		return nil
	}
	if p.cfg.OnMismatch == MismatchRefuse {
		for _, r := range rs {
			if _, other := claimsOther(r.res, tenant); other {
				p.tel.add(ctx, sig, outcomeRefused, tenant, total)
				return consumererror.NewPermanent(status.Errorf(codes.PermissionDenied,
					"tenant: the data names a tenant other than %q, the tenant this sender authenticated as", tenant))
			}
		}
	}
	var flagged int64
	for _, r := range rs {
		a := r.res.Attributes()
		// The mark is Docket's to set; a sender's own is dropped.
		a.Remove(conventions.TenantClaimedAttribute)
		if claimed, other := claimsOther(r.res, tenant); other {
			a.PutStr(conventions.TenantClaimedAttribute, bounded(claimed))
			flagged += r.records
		}
		a.PutStr(conventions.TenantAttribute, tenant)
	}
	p.tel.add(ctx, sig, outcomeFlagged, tenant, flagged)
	p.tel.add(ctx, sig, outcomeAuthenticated, tenant, total-flagged)
	return nil
}

// relayed keeps the tenant a relay stamped on each resource, and the
// relay's docket.tenant.claimed mark with it, or refuses the whole request
// when a resource names no valid tenant: a relay authenticated its
// senders, so its stamp is the tenant, and a resource without one is no
// sender's.
func (p *tenantProcessor) relayed(ctx context.Context, sig signal, rs []resource, total int64) error {
	tenants := make([]string, len(rs))
	for i, r := range rs {
		v, ok := r.res.Attributes().Get(conventions.TenantAttribute)
		if !ok || v.Type() != pcommon.ValueTypeStr || !conventions.ValidTenant(v.Str()) {
			p.tel.add(ctx, sig, outcomeUnauthenticated, conventions.UnknownTenant, total)
			return consumererror.NewPermanent(status.Errorf(codes.PermissionDenied,
				"tenant: a relay sent a resource without a valid %s, which the relay must stamp", conventions.TenantAttribute))
		}
		tenants[i] = v.Str()
	}
	for i, r := range rs {
		p.tel.add(ctx, sig, outcomeRelayed, tenants[i], r.records)
	}
	return nil
}

// Where a request's tenant comes from.
type source int

const (
	fromIdentity source = iota // the sender's authenticated identity
	fromRelay                  // each resource's tenant, stamped by an authenticated relay
	fromSender                 // each resource's tenant as the sender wrote it (trust_sender_attribute)
)

// identity returns the tenant of the request's authenticated sender, or
// where else the tenant comes from: an authenticated relay's stamp, or,
// when there is no identity and the config takes the sender's word, the
// sender's.
func (p *tenantProcessor) identity(ctx context.Context) (tenant string, from source, err error) {
	info := client.FromContext(ctx)
	auth := info.Auth
	if auth == nil {
		if p.cfg.TrustSenderAttribute {
			// Trust is for a sender on this machine; a receiver bound
			// wider by mistake must not open it to the network.
			if !loopback(info.Addr) {
				return "", 0, consumererror.NewPermanent(status.Error(codes.Unauthenticated,
					"tenant: trust_sender_attribute accepts loopback senders only; this one needs an authenticated identity"))
			}
			return "", fromSender, nil
		}
		return "", 0, consumererror.NewPermanent(status.Error(codes.Unauthenticated,
			"tenant: the request carries no authenticated identity (configure an authenticator on the receiver)"))
	}
	// Only tenantauth sets the relay attribute, and never beside a tenant:
	// an identity that is both is refused rather than guessed at.
	if relay, _ := auth.GetAttribute(conventions.AuthRelayAttribute).(string); relay != "" {
		if auth.GetAttribute(p.cfg.AuthAttribute) != nil {
			return "", 0, consumererror.NewPermanent(status.Error(codes.PermissionDenied,
				"tenant: the sender's identity names a relay and a tenant"))
		}
		return "", fromRelay, nil
	}
	id, _ := auth.GetAttribute(p.cfg.AuthAttribute).(string)
	tenant = id
	if len(p.cfg.Identities) > 0 {
		tenant = p.cfg.Identities[id]
	}
	if !conventions.ValidTenant(tenant) {
		return "", 0, consumererror.NewPermanent(status.Error(codes.PermissionDenied,
			fmt.Sprintf("tenant: the sender's identity (auth attribute %q) maps to no tenant", p.cfg.AuthAttribute)))
	}
	return tenant, fromIdentity, nil
}

// loopback reports whether a client address is a loopback IP; an unknown
// address is not.
func loopback(addr net.Addr) bool {
	if addr == nil {
		return false
	}
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// claimsOther returns the tenant a resource names when it is not tenant.
func claimsOther(res pcommon.Resource, tenant string) (string, bool) {
	v, ok := res.Attributes().Get(conventions.TenantAttribute)
	if !ok {
		return "", false
	}
	if v.Type() == pcommon.ValueTypeStr {
		return v.Str(), v.Str() != tenant
	}
	return v.AsString(), true
}

// bounded keeps a claimed tenant short and valid UTF-8: it is the sender's
// text and may be anything.
func bounded(s string) string {
	return strings.ToValidUTF8(s[:min(len(s), conventions.MaxTenantLen)], "")
}
