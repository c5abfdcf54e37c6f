package lifecycleextension

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/docketlabs/docket/contentstore/contentstoreextension"
	"github.com/docketlabs/docket/internal/hosttest"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstorageextension"
	"github.com/docketlabs/docket/ledger/lifecycle"
)

var (
	hostsMu sync.Mutex
	hosts   = map[*testing.T]component.Host{}
)

// lifecycleHost is the host of the generated lifecycle test: a ledgerstorage
// and a contentstore extension with their default configuration, under
// ./data of a temporary directory. chDB opens one directory per process,
// so the calls of one test share one host.
func lifecycleHost(t *testing.T) component.Host {
	hostsMu.Lock()
	defer hostsMu.Unlock()
	if h, ok := hosts[t]; ok {
		return h
	}
	hosttest.InTempDir(t, shorttest.ChDB)
	ext := startStorage(t)
	hosts[t] = ext
	t.Cleanup(func() {
		hostsMu.Lock()
		delete(hosts, t)
		hostsMu.Unlock()
	})
	return ext
}

// startStorage starts the ledger and the content store under ./data and
// shuts them down when the test ends.
func startStorage(t *testing.T) hosttest.Extensions {
	t.Helper()
	ctx := context.Background()
	h := hosttest.Extensions{}
	for _, f := range []extension.Factory{ledgerstorageextension.NewFactory(), contentstoreextension.NewFactory()} {
		ext, err := f.Create(ctx, extensiontest.NewNopSettings(f.Type()), f.CreateDefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err = ext.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ext.Shutdown(ctx) })
		h[component.NewID(f.Type())] = ext
	}
	return h
}

// replica is one lifecycle extension with its own log.
type replica struct {
	name string
	ext  *lifecycleExtension
	logs *observer.ObservedLogs
}

func newReplica(t *testing.T, name string, cfg *Config, host component.Host) *replica {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	set := extensiontest.NewNopSettings(NewFactory().Type())
	set.Logger = zap.New(core)
	ext, err := NewFactory().Create(context.Background(), set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err = ext.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, ext: ext.(*lifecycleExtension), logs: logs}
	t.Cleanup(func() { _ = r.ext.Shutdown(context.Background()) })
	return r
}

// runs are the IDs of the expiry runs this replica finished.
func (r *replica) runs() []string {
	var ids []string
	for _, e := range r.logs.FilterMessage("expiry run done").All() {
		for _, f := range e.Context {
			if f.Key == "run_id" {
				ids = append(ids, f.String)
			}
		}
	}
	return ids
}

// TestTwoReplicasOneRunner: two lifecycle runners on one ledger, as two
// collectors sharing it would have. Only the lease holder runs cycles, no
// expiry run overlaps another, every run is one replica's; when the holder
// dies (stops without giving the lease up) the other takes over only after
// the lease has expired.
func TestTwoReplicasOneRunner(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	t.Chdir(t.TempDir())
	host := startStorage(t)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Interval = 150 * time.Millisecond
	// Renewals every 500ms with 3.6s of trust: a loaded machine delays a few
	// without handing the lease over mid-test.
	cfg.Lease = LeaseConfig{TTL: 4 * time.Second, RenewInterval: 500 * time.Millisecond}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a := newReplica(t, "a", cfg, host)
	b := newReplica(t, "b", cfg, host)

	waitFor(t, 20*time.Second, func() bool { return len(a.runs())+len(b.runs()) >= 6 })
	holder, standby := a, b
	if len(b.runs()) > len(a.runs()) {
		holder, standby = b, a
	}
	if n := len(standby.runs()); n != 0 {
		t.Fatalf("both replicas ran cycles: %s %d, %s %d", holder.name, len(holder.runs()), standby.name, n)
	}
	if !holder.ext.keeper.Held() || standby.ext.keeper.Held() {
		t.Fatal("the lease is not held by the replica that runs")
	}

	// The holder dies: it stops renewing and running, the lease stays
	// until it expires.
	if err := holder.ext.stop(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	died := time.Now()
	before := len(holder.runs())
	waitFor(t, 20*time.Second, func() bool { return len(standby.runs()) > 0 })
	takeover := time.Since(died)
	// The holder renewed at most RenewInterval before it died, so its
	// lease had at least TTL - RenewInterval left.
	if min := cfg.Lease.TTL - cfg.Lease.RenewInterval; takeover < min {
		t.Fatalf("took over %s after the holder died, before its lease could expire (%s)", takeover, min)
	}
	if len(holder.runs()) != before {
		t.Fatal("the dead holder ran on")
	}
	t.Logf("%s ran %d cycles; %s took over %s after %s died (ttl %s, renew %s)", holder.name, before, standby.name,
		takeover.Round(time.Millisecond), holder.name, cfg.Lease.TTL, cfg.Lease.RenewInterval)
	waitFor(t, 20*time.Second, func() bool { return len(standby.runs()) >= 3 })
	if err := standby.ext.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The ledger's record: every run is one replica's, and none overlaps
	// another.
	m, _ := standby.ext.Lifecycle()
	recorded, err := m.ExpiryRuns(context.Background(), access.Principal{User: "t", Role: access.RoleAdmin, Tenants: []string{access.AllTenants}}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	ran := append(holder.runs(), standby.runs()...)
	var ids []string
	for _, r := range recorded {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	slices.Sort(ran)
	if !slices.Equal(ids, ran) {
		t.Fatalf("the ledger records %d runs, the replicas ran %d", len(ids), len(ran))
	}
	slices.SortFunc(recorded, func(x, y lifecycle.ExpiryRun) int { return x.StartedAt.Compare(y.StartedAt) })
	for i := 1; i < len(recorded); i++ {
		if prev := recorded[i-1]; !prev.At.Before(recorded[i].StartedAt) {
			t.Fatalf("run %s started at %s, before run %s ended at %s", recorded[i].ID, recorded[i].StartedAt, prev.ID, prev.At)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	def := NewFactory().CreateDefaultConfig().(*Config)
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Config){
		"no interval":         func(c *Config) { c.Interval = 0 },
		"short ttl":           func(c *Config) { c.Lease.TTL = time.Millisecond },
		"renewal beyond half": func(c *Config) { c.Lease.RenewInterval = c.Lease.TTL },
		"bad retention":       func(c *Config) { c.Retention.Default.ContentDays = -1 },
	} {
		c := *def
		mutate(&c)
		if c.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
