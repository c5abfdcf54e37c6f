package auth

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// CreateOnRecord creates a token like Create and puts its creation on the
// access log, as as(tenant) acting in each tenant it grants. A credential
// whose creation is not on record must not work: if recording fails, the
// token is revoked again and the error says so.
func (t *Tokens) CreateOnRecord(ctx context.Context, l *ledgerstore.Store, as func(tenant string) access.Principal,
	name string, grants Grants, by string, expires time.Time) (string, Token, error) {
	secret, tok, err := t.Create(name, grants, by, expires)
	if err != nil {
		return "", Token{}, err
	}
	if err = tok.record(ctx, l, as, access.ActionTokenCreate); err != nil {
		if _, revokeErr := t.Revoke(tok.ID, by); revokeErr != nil {
			err = errors.Join(err, fmt.Errorf("revoke the unrecorded token %s: %w", tok.ID, revokeErr))
		}
		return "", Token{}, err
	}
	return secret, tok, nil
}

// RevokeOnRecord revokes token id and then puts the revocation on the
// access log: failing to record must not keep a token alive.
func (t *Tokens) RevokeOnRecord(ctx context.Context, l *ledgerstore.Store, as func(tenant string) access.Principal, id, by string) (Token, error) {
	tok, err := t.Revoke(id, by)
	if err != nil {
		return Token{}, err
	}
	return tok, tok.record(ctx, l, as, access.ActionTokenRevoke)
}

// record puts a change of tok in the access log of every tenant it grants,
// so each tenant's log shows who could act in it.
func (tok Token) record(ctx context.Context, l *ledgerstore.Store, as func(tenant string) access.Principal, action string) error {
	for _, tenant := range slices.Sorted(maps.Keys(tok.Grants)) {
		detail := fmt.Sprintf("token %s of service account %q, role %s, expires %s",
			tok.ID, tok.Name, tok.Grants[tenant], tok.ExpiresAt.UTC().Format(time.RFC3339))
		if err := access.RecordChange(ctx, l, as(tenant), action, tenant, detail); err != nil {
			return err
		}
	}
	return nil
}
