package ledgerstore

// SharedStore is the package's test ledger, for the tests outside the
// package (counts_test.go) that need ledgertest, which imports this one.
func SharedStore() *Store { return testStore }

// RefreshTenant holds the calls of the refresh tests, some of whose
// rewrites fail.
const RefreshTenant = refreshTenant
