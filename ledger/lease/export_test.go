package lease

import (
	"context"
	"time"
)

// Claim exposes claim to the tests, which live outside the package: they
// open their ledger through ledgerstore, which uses this package.
func (l *Lease) Claim(ctx context.Context, term uint64, ttl time.Duration) (bool, error) {
	return l.claim(ctx, term, ttl)
}
