package lifecycle

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
)

// DefaultOrphanGrace is how old an object must be before being nothing's
// counts: content is stored before its ledger row is written (the
// exporter batches and queues), so a fresh object has no row yet.
const DefaultOrphanGrace = time.Hour

// OrphanOptions control an orphan scan.
type OrphanOptions struct {
	// Tenant restricts the scan to one tenant; "" scans every tenant and
	// needs a grant of all tenants.
	Tenant string
	// Grace: objects stored less than this long ago are not judged; zero
	// means DefaultOrphanGrace.
	Grace time.Duration
}

// OrphanCounts are the scan's counts of one tenant.
type OrphanCounts struct {
	Tenant string `json:"tenant"`
	// ObjectsScanned: objects older than the grace.
	ObjectsScanned uint64 `json:"objects_scanned"`
	// Orphans: those the ledger has no reference to.
	Orphans     uint64 `json:"orphans"`
	OrphanBytes uint64 `json:"orphan_bytes"`
}

// OrphanReport is what an orphan scan found: counts only, never a
// reference or content.
type OrphanReport struct {
	At      time.Time      `json:"at"`
	Grace   string         `json:"grace"`
	Orphans uint64         `json:"orphans"`
	Tenants []OrphanCounts `json:"tenants"`
}

// Orphans lists the store and counts the objects the ledger references
// nowhere: no call, no span, no log record linked to a span on record.
// Such an object is out of reach of reveal, deletion and holds (expiry
// still removes it after content retention), so it is a defect to report,
// not a state. The scan changes nothing.
func (m *Manager) Orphans(ctx context.Context, p access.Principal, opts OrphanOptions) (OrphanReport, error) {
	if err := mayRead(p, opts.Tenant); err != nil {
		return OrphanReport{}, err
	}
	if opts.Tenant != "" {
		if err := invalidTenant(opts.Tenant); err != nil {
			return OrphanReport{}, err
		}
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultOrphanGrace
	}
	now := m.clock().UTC()
	report := OrphanReport{At: now, Grace: opts.Grace.String(), Tenants: []OrphanCounts{}}
	byTenant := map[string]*OrphanCounts{}
	pending := map[string][]contentstore.ObjectInfo{}
	flush := func(tenant string) error {
		page := pending[tenant]
		delete(pending, tenant)
		names := make([]string, len(page))
		for i, o := range page {
			names[i] = o.Ref.String()
		}
		found := map[string]bool{}
		for _, list := range refLists(names) {
			rows, err := query[refPage](ctx, m, "lifecycle_referenced", map[string]any{"tenant": tenant, "refs": list})
			if err != nil {
				return err
			}
			for _, r := range rows {
				found[r.Ref] = true
			}
		}
		c := byTenant[tenant]
		for i, o := range page {
			if !found[names[i]] {
				c.Orphans++
				c.OrphanBytes += uint64(max(o.Size, 0))
			}
		}
		return nil
	}
	err := m.content.List(ctx, contentstore.Selection{Tenant: opts.Tenant}, func(o contentstore.ObjectInfo) error {
		if now.Sub(o.StoredAt) < opts.Grace {
			return nil
		}
		t := o.Ref.Tenant
		if byTenant[t] == nil {
			byTenant[t] = &OrphanCounts{Tenant: t}
		}
		byTenant[t].ObjectsScanned++
		pending[t] = append(pending[t], o)
		if len(pending[t]) >= pageSize {
			return flush(t)
		}
		return nil
	})
	if err != nil {
		return report, err
	}
	for t := range pending {
		if err := flush(t); err != nil {
			return report, err
		}
	}
	for _, c := range byTenant {
		report.Tenants = append(report.Tenants, *c)
		report.Orphans += c.Orphans
	}
	slices.SortFunc(report.Tenants, func(a, b OrphanCounts) int { return strings.Compare(a.Tenant, b.Tenant) })
	return report, nil
}
