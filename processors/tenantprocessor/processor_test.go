package tenantprocessor

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/metrictest"
	"github.com/docketlabs/docket/processors/tenantprocessor/internal/metadata"
)

// identity is what an authenticator leaves in client.Info.Auth.
type identity map[string]any

func (id identity) GetAttribute(k string) any { return id[k] }
func (id identity) GetAttributeNames() []string {
	var out []string
	for k := range id {
		out = append(out, k)
	}
	return out
}

func as(tenant string) context.Context {
	return client.NewContext(context.Background(), client.Info{Auth: identity{conventions.AuthTenantAttribute: tenant}})
}

// traces makes one resource per claim, two spans each; "" claims nothing.
func traces(claims ...any) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, c := range claims {
		rs := td.ResourceSpans().AppendEmpty()
		switch v := c.(type) {
		case string:
			if v != "" {
				rs.Resource().Attributes().PutStr(conventions.TenantAttribute, v)
			}
		case int64:
			rs.Resource().Attributes().PutInt(conventions.TenantAttribute, v)
		}
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		spans.AppendEmpty().SetName("chat")
		spans.AppendEmpty().SetName("chat")
	}
	return td
}

type harness struct {
	t    *testing.T
	tel  *componenttest.Telemetry
	sink *consumertest.TracesSink
	logs *consumertest.LogsSink
	cfg  *Config
}

func newHarness(t *testing.T, edit func(*Config)) *harness {
	h := &harness{t: t, tel: componenttest.NewTelemetry(), sink: new(consumertest.TracesSink), logs: new(consumertest.LogsSink), cfg: createDefaultConfig()}
	t.Cleanup(func() { require.NoError(t, h.tel.Shutdown(context.Background())) })
	if edit != nil {
		edit(h.cfg)
	}
	require.NoError(t, h.cfg.Validate())
	return h
}

func (h *harness) traces(ctx context.Context, td ptrace.Traces) error {
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	p, err := NewFactory().CreateTraces(ctx, set, h.cfg, h.sink)
	require.NoError(h.t, err)
	return p.ConsumeTraces(ctx, td)
}

// stored returns the tenant and claimed marks of what reached the next consumer.
func (h *harness) stored() (tenants, claimed []string) {
	for _, td := range h.sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			a := rs.Resource().Attributes()
			v, _ := a.Get(conventions.TenantAttribute)
			tenants = append(tenants, v.Str())
			c, ok := a.Get(conventions.TenantClaimedAttribute)
			if !ok {
				c = pcommon.NewValueStr("")
			}
			claimed = append(claimed, c.Str())
		}
	}
	return tenants, claimed
}

func (h *harness) counts() map[string]int64 {
	h.t.Helper()
	return metrictest.Sums(h.t, h.tel, "otelcol_processor_tenant_records")
}

func requireCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	require.Error(t, err)
	assert.True(t, consumererror.IsPermanent(err), "a refusal must not be retried: %v", err)
	s, ok := status.FromError(err)
	require.True(t, ok, "no gRPC status in %v", err)
	assert.Equal(t, code, s.Code(), err.Error())
}

func TestStampsAuthenticatedTenant(t *testing.T) {
	h := newHarness(t, nil)
	require.NoError(t, h.traces(as("acme"), traces("", "acme")))
	tenants, claimed := h.stored()
	assert.Equal(t, []string{"acme", "acme"}, tenants)
	assert.Equal(t, []string{"", ""}, claimed)
	assert.Equal(t, map[string]int64{"outcome=authenticated,signal=traces,tenant=acme": 4}, h.counts())
}

func TestSpoofRefused(t *testing.T) {
	h := newHarness(t, nil)
	// One honest resource and one claiming globex: the request is refused whole.
	err := h.traces(as("acme"), traces("acme", "globex"))
	requireCode(t, err, codes.PermissionDenied)
	assert.NotContains(t, err.Error(), "globex", "the error repeats the sender's claim")
	assert.Zero(t, h.sink.SpanCount(), "a refused request reached the pipeline")
	// A claim of another type is another tenant too.
	requireCode(t, h.traces(as("42x"), traces(int64(42))), codes.PermissionDenied)
	assert.Equal(t, map[string]int64{
		"outcome=refused,signal=traces,tenant=acme": 4,
		"outcome=refused,signal=traces,tenant=42x":  2,
	}, h.counts())
}

func TestSpoofFlagged(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.OnMismatch = MismatchFlag })
	huge := strings.Repeat("g", 1<<20) + "\xff"
	require.NoError(t, h.traces(as("acme"), traces("acme", "globex", huge)))
	tenants, claimed := h.stored()
	assert.Equal(t, []string{"acme", "acme", "acme"}, tenants, "stored under a tenant the sender did not authenticate as")
	assert.Equal(t, []string{"", "globex", strings.Repeat("g", conventions.MaxTenantLen)}, claimed)
	assert.Equal(t, map[string]int64{
		"outcome=authenticated,signal=traces,tenant=acme": 2,
		"outcome=flagged,signal=traces,tenant=acme":       4,
	}, h.counts(), "the sender's claims became label values")
}

func TestSenderCannotPlantTheMark(t *testing.T) {
	for _, mode := range []string{MismatchRefuse, MismatchFlag} {
		h := newHarness(t, func(c *Config) { c.OnMismatch = mode })
		td := traces("acme")
		td.ResourceSpans().At(0).Resource().Attributes().PutStr(conventions.TenantClaimedAttribute, "globex")
		require.NoError(t, h.traces(as("acme"), td))
		_, claimed := h.stored()
		assert.Equal(t, []string{""}, claimed, mode)
	}
}

// refusedAuth returns the process account's refused_auth spans per tenant.
func refusedAuth() map[string]int64 {
	m := map[string]int64{}
	for _, tn := range completeness.Process.Snapshot(nil).Tenants {
		m[tn.Tenant] = tn.Counts[completeness.RefusedAuth]
	}
	return m
}

func TestNoIdentityRefused(t *testing.T) {
	h := newHarness(t, nil)
	before := refusedAuth()
	err := h.traces(context.Background(), traces("acme"))
	requireCode(t, err, codes.Unauthenticated)
	// An identity that names no tenant is refused as well.
	requireCode(t, h.traces(as(""), traces("acme")), codes.PermissionDenied)
	requireCode(t, h.traces(as("bad\ntenant"), traces("")), codes.PermissionDenied)
	assert.Zero(t, h.sink.SpanCount())
	// Refusals without an identity are counted under the reserved unknown
	// tenant, as the receivers' refusals are, never under "".
	assert.Equal(t, map[string]int64{"outcome=unauthenticated,signal=traces,tenant=" + conventions.UnknownTenant: 6}, h.counts())
	after := refusedAuth()
	assert.Equal(t, int64(6), after[conventions.UnknownTenant]-before[conventions.UnknownTenant], "account: %v", after)
	assert.NotContains(t, after, "", "the account counts a tenant named \"\"")
}

// relay is a request of an authenticated relay (an agent on another host)
// as tenantauth leaves it: the relay attribute, no tenant.
func relay() context.Context {
	return client.NewContext(context.Background(), client.Info{
		Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 50000},
		Auth: identity{conventions.AuthRelayAttribute: "docket-agent"},
	})
}

func TestRelayKeepsTheTenantsItStamped(t *testing.T) {
	h := newHarness(t, nil)
	td := traces("acme", "globex")
	// The relay flagged a sender of acme's that claimed globex: the mark
	// is the relay's, and stays.
	td.ResourceSpans().At(0).Resource().Attributes().PutStr(conventions.TenantClaimedAttribute, "globex")
	require.NoError(t, h.traces(relay(), td))
	tenants, claimed := h.stored()
	assert.Equal(t, []string{"acme", "globex"}, tenants)
	assert.Equal(t, []string{"globex", ""}, claimed)
	assert.Equal(t, map[string]int64{
		"outcome=relayed,signal=traces,tenant=acme":   2,
		"outcome=relayed,signal=traces,tenant=globex": 2,
	}, h.counts())
}

func TestRelayWithoutAStampedTenantRefused(t *testing.T) {
	h := newHarness(t, nil)
	before := refusedAuth()
	// One resource without a valid tenant refuses the request whole.
	for _, td := range []ptrace.Traces{traces("acme", ""), traces(int64(42)), traces("bad\ntenant"), traces(conventions.UnknownTenant)} {
		requireCode(t, h.traces(relay(), td), codes.PermissionDenied)
	}
	assert.Zero(t, h.sink.SpanCount(), "a refused request reached the pipeline")
	assert.Equal(t, map[string]int64{"outcome=unauthenticated,signal=traces,tenant=" + conventions.UnknownTenant: 10}, h.counts())
	assert.Equal(t, int64(10), refusedAuth()[conventions.UnknownTenant]-before[conventions.UnknownTenant])
}

// trust_sender_attribute's default tenant is for loopback senders without
// identity, never for a relay's resource without a tenant.
func TestTrustSenderAttributeLeavesRelaysAlone(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TrustSenderAttribute = true })
	requireCode(t, h.traces(relay(), traces("")), codes.PermissionDenied)
	require.NoError(t, h.traces(relay(), traces("acme")))
	tenants, _ := h.stored()
	assert.Equal(t, []string{"acme"}, tenants, "the default tenant was given to a relay's resource without one")
}

// A relay is no tenant: an identity that claims to be both is refused, so
// neither side's rules are bypassed through the other's.
func TestRelayAndTenantIdentityRefused(t *testing.T) {
	h := newHarness(t, nil)
	both := client.NewContext(context.Background(), client.Info{Auth: identity{
		conventions.AuthRelayAttribute: "docket-agent", conventions.AuthTenantAttribute: "acme",
	}})
	requireCode(t, h.traces(both, traces("globex")), codes.PermissionDenied)
	assert.Zero(t, h.sink.SpanCount())
	assert.Equal(t, map[string]int64{"outcome=unauthenticated,signal=traces,tenant=" + conventions.UnknownTenant: 2}, h.counts())
}

func TestIdentitiesMap(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.AuthAttribute = "subject"
		c.Identities = map[string]string{"svc-billing": "acme"}
	})
	ctx := func(subject string) context.Context {
		return client.NewContext(context.Background(), client.Info{Auth: identity{"subject": subject, "tenant": "globex"}})
	}
	require.NoError(t, h.traces(ctx("svc-billing"), traces("")))
	requireCode(t, h.traces(ctx("svc-unknown"), traces("")), codes.PermissionDenied)
	tenants, _ := h.stored()
	assert.Equal(t, []string{"acme"}, tenants)
}

func from(addr net.Addr) context.Context {
	return client.NewContext(context.Background(), client.Info{Addr: addr})
}

func TestTrustedSenderAttribute(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TrustSenderAttribute = true; c.DefaultTenant = "local" })
	// OTLP/HTTP gives the client address as an IP, gRPC as IP and port.
	require.NoError(t, h.traces(from(&net.IPAddr{IP: net.IPv4(127, 0, 0, 1)}), traces("acme", "", "bad\x00")))
	require.NoError(t, h.traces(from(&net.TCPAddr{IP: net.IPv6loopback, Port: 50000}), traces("globex")))
	tenants, _ := h.stored()
	assert.Equal(t, []string{"acme", "local", "local", "globex"}, tenants)
	// Trust ends at the machine: other and unknown addresses are refused.
	requireCode(t, h.traces(from(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 50000}), traces("acme")), codes.Unauthenticated)
	requireCode(t, h.traces(context.Background(), traces("acme")), codes.Unauthenticated)
	// An identity, when there is one, still wins.
	requireCode(t, h.traces(as("globex"), traces("acme")), codes.PermissionDenied)
	assert.Equal(t, map[string]int64{
		"outcome=sender_attribute,signal=traces,tenant=":                            8,
		"outcome=unauthenticated,signal=traces,tenant=" + conventions.UnknownTenant: 4,
		"outcome=refused,signal=traces,tenant=globex":                               2,
	}, h.counts(), "sender-chosen tenants became label values")
}

func TestLogs(t *testing.T) {
	h := newHarness(t, nil)
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = h.tel.NewTelemetrySettings()
	p, err := NewFactory().CreateLogs(context.Background(), set, h.cfg, h.logs)
	require.NoError(t, err)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	require.NoError(t, p.ConsumeLogs(as("acme"), ld))
	v, _ := h.logs.AllLogs()[0].ResourceLogs().At(0).Resource().Attributes().Get(conventions.TenantAttribute)
	assert.Equal(t, "acme", v.Str())

	spoof := plog.NewLogs()
	rl = spoof.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(conventions.TenantAttribute, "globex")
	rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	requireCode(t, p.ConsumeLogs(as("acme"), spoof), codes.PermissionDenied)
	assert.Equal(t, 1, h.logs.LogRecordCount())
	assert.Equal(t, map[string]int64{
		"outcome=authenticated,signal=logs,tenant=acme": 1,
		"outcome=refused,signal=logs,tenant=acme":       1,
	}, h.counts())
}

// Metrics get the sender's authenticated tenant like spans: the ledger
// exporter counts an application's dropped-span report under it, so a
// sender must not be able to charge it to another tenant.
func TestMetricsStampedWithTheAuthenticatedTenant(t *testing.T) {
	sink := new(consumertest.MetricsSink)
	cfg := createDefaultConfig()
	cfg.OnMismatch = MismatchFlag
	p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(conventions.TenantAttribute, "globex")
	rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty().SetEmptySum().DataPoints().AppendEmpty().SetIntValue(3)
	require.NoError(t, p.ConsumeMetrics(as("acme"), md))
	got := sink.AllMetrics()[0].ResourceMetrics().At(0).Resource().Attributes()
	tenant, _ := got.Get(conventions.TenantAttribute)
	claimed, _ := got.Get(conventions.TenantClaimedAttribute)
	assert.Equal(t, "acme", tenant.Str())
	assert.Equal(t, "globex", claimed.Str())
	require.Error(t, p.ConsumeMetrics(context.Background(), md), "a sender without identity")
}
