package storageconfig

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/internal/hostext"
)

// RetryInterval is how often an unavailable ledger is opened again.
const RetryInterval = 5 * time.Second

// Provider is implemented by the ledgerstorage extension, the one owner of
// the ledger's engine in a collector; components find it among the host's
// extensions by the ID in their storage key.
type Provider interface {
	// LedgerStorage returns the ledger; nil before the extension started.
	LedgerStorage() *Reopening
}

// Use is a component's storage key: the ID of a ledgerstorage extension
// (`storage: ledgerstorage`) or, deprecated, an engine configured in the
// component itself (`storage: {embedded: …}` / `{clickhouse: …}`).
type Use struct {
	// Extension is set when the key names an extension.
	Extension *component.ID `mapstructure:"-"`
	// Config is the engine configured inline (deprecated).
	Config `mapstructure:",squash"`
}

// UnmarshalText reads `storage: <extension id>`.
func (u *Use) UnmarshalText(text []byte) error {
	var id component.ID
	if err := id.UnmarshalText(text); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	u.Extension = &id
	return nil
}

// Dependencies is the extension the component must start after.
func (u Use) Dependencies() []component.ID {
	if u.Extension != nil {
		return []component.ID{*u.Extension}
	}
	return nil
}

// Ledger returns the ledger the key names: the extension's, shared by every
// component that names it (owned false: the extension closes it), or, when
// no extension is named, an engine opened from the inline configuration
// (the default one when there is none) for this component alone (owned
// true: the caller closes it; deprecated).
func (u Use) Ledger(ctx context.Context, host component.Host) (r *Reopening, owned bool, err error) {
	if u.Extension != nil {
		r, err = Lookup(host, *u.Extension)
		return r, false, err
	}
	return OpenReopening(ctx, u.Config, RetryInterval), true, nil
}

// Lookup finds the ledgerstorage extension id among the host's extensions.
func Lookup(host component.Host, id component.ID) (*Reopening, error) {
	prov, err := hostext.Find[Provider](host, id, "ledgerstorage")
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	r := prov.LedgerStorage()
	if r == nil {
		return nil, fmt.Errorf("storage: ledgerstorage extension %s has not started", id)
	}
	return r, nil
}

// Deprecation is the warning a component logs when it opens an engine of
// its own.
const Deprecation = "the storage engine configured inside this component is deprecated and will be removed in the next release: " +
	"declare it once in a ledgerstorage extension and write `storage: ledgerstorage` here"
