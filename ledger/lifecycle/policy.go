package lifecycle

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docketlabs/docket/contentstore"
)

// Default retention. Content (prompts and answers, the sensitive part) is
// kept for a quarter; ledger rows (metadata, hashes, cost — the evidence
// that a call happened and what answered) for a bit more than a year, so a
// complaint about last year's answer can still be traced after its content
// is gone.
const (
	DefaultContentDays = 90
	DefaultLedgerDays  = 400
	// MaxDays bounds a retention setting (100 years).
	MaxDays = 36500
)

// Retention is how long one tenant's data is kept, in days from the call's
// start time.
type Retention struct {
	// ContentDays: content objects referenced only by calls older than
	// this expire. 0 takes the default.
	ContentDays int `mapstructure:"content_days" json:"content_days"`
	// LedgerDays: ledger rows (calls and evidence spans) older than this
	// are removed. 0 takes the default.
	LedgerDays int `mapstructure:"ledger_days" json:"ledger_days"`
}

// Policy is the retention of every tenant: a default and per-tenant
// overrides.
type Policy struct {
	Default Retention            `mapstructure:"default" json:"default"`
	Tenants map[string]Retention `mapstructure:"tenants" json:"tenants,omitempty"`
}

// DefaultPolicy keeps content DefaultContentDays and ledger rows
// DefaultLedgerDays for every tenant.
func DefaultPolicy() Policy {
	return Policy{Default: Retention{ContentDays: DefaultContentDays, LedgerDays: DefaultLedgerDays}}
}

// Validate checks every setting.
func (p Policy) Validate() error {
	if err := p.Default.validate(false); err != nil {
		return fmt.Errorf("retention default: %w", err)
	}
	for tenant, r := range p.Tenants {
		if err := contentstore.ValidateTenant(tenant); err != nil {
			return fmt.Errorf("retention: %w", err)
		}
		if err := r.validate(true); err != nil {
			return fmt.Errorf("retention of tenant %q: %w", tenant, err)
		}
	}
	return nil
}

func (r Retention) validate(zeroInherits bool) error {
	for _, f := range []struct {
		name string
		days int
	}{{"content_days", r.ContentDays}, {"ledger_days", r.LedgerDays}} {
		if f.days == 0 && zeroInherits {
			continue
		}
		if f.days < 1 || f.days > MaxDays {
			return fmt.Errorf("%s must be between 1 and %d, got %d", f.name, MaxDays, f.days)
		}
	}
	return nil
}

// For returns the retention of one tenant, defaults filled in.
func (p Policy) For(tenant string) Retention {
	r := p.Tenants[tenant]
	if r.ContentDays == 0 {
		r.ContentDays = p.Default.ContentDays
	}
	if r.LedgerDays == 0 {
		r.LedgerDays = p.Default.LedgerDays
	}
	return r
}

// ContentCutoff is the start time before which a call no longer keeps its
// content.
func (r Retention) ContentCutoff(now time.Time) time.Time { return daysBefore(now, r.ContentDays) }

// LedgerCutoff is the start time before which a ledger row expires.
func (r Retention) LedgerCutoff(now time.Time) time.Time { return daysBefore(now, r.LedgerDays) }

func daysBefore(now time.Time, days int) time.Time {
	return now.UTC().Add(-time.Duration(days) * 24 * time.Hour)
}

// ParseTenantRetention parses a per-tenant setting as given on a command
// line: "TENANT=CONTENT_DAYS:LEDGER_DAYS", either number may be empty to
// take the default ("acme=30:", "acme=:730"). The tenant is the part before
// the last "=".
func ParseTenantRetention(s string) (string, Retention, error) {
	i := strings.LastIndexByte(s, '=')
	if i <= 0 {
		return "", Retention{}, errors.New("retention: want TENANT=CONTENT_DAYS:LEDGER_DAYS")
	}
	tenant, spec := s[:i], s[i+1:]
	if err := contentstore.ValidateTenant(tenant); err != nil {
		return "", Retention{}, fmt.Errorf("retention: %w", err)
	}
	c, l, ok := strings.Cut(spec, ":")
	if !ok || c == "" && l == "" {
		return "", Retention{}, errors.New("retention: want TENANT=CONTENT_DAYS:LEDGER_DAYS")
	}
	var r Retention
	for _, f := range []struct {
		text string
		dst  *int
	}{{c, &r.ContentDays}, {l, &r.LedgerDays}} {
		if f.text == "" {
			continue
		}
		n, err := strconv.Atoi(f.text)
		if err != nil || n < 1 || n > MaxDays {
			return "", Retention{}, fmt.Errorf("retention: days must be a whole number between 1 and %d", MaxDays)
		}
		*f.dst = n
	}
	return tenant, r, nil
}
