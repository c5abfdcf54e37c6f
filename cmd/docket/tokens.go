package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ui/auth"
)

// tokensCommand manages the service accounts' API tokens beside the
// accounts file. A running UI rereads the file, so a revocation here takes
// effect at its next request.
func tokensCommand() *cobra.Command {
	var local localFlags
	cmd := &cobra.Command{Use: "tokens", Short: "Manage API tokens of service accounts (DIR/ui-tokens.json)"}
	local.registerLedger(cmd.PersistentFlags())
	tokensFile := func() (*auth.Tokens, error) {
		return auth.OpenTokens(auth.TokensFileFor(usersFile(local)))
	}
	// change runs a change to the tokens with the ledger open, so that it
	// goes on the access log like a change made in the UI; unopened says
	// what it means when the ledger cannot be opened.
	change := func(cmd *cobra.Command, fn func(t *auth.Tokens, l *ledgerstore.Store, as func(string) access.Principal, by string) error, unopened func(error) error) error {
		store, operator, err := local.openLedger(cmd.Context())
		if err != nil {
			return unopened(err)
		}
		defer func() { _ = store.Engine().Close() }()
		t, err := tokensFile()
		if err != nil {
			return err
		}
		return fn(t, store, func(string) access.Principal { return operator }, operator.User)
	}
	var grants []string
	var days int
	create := &cobra.Command{
		Use:   "create NAME --grant TENANT=ROLE [--expires-in-days 90]",
		Short: "Create a service account's token; it is printed once and stored hashed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			g, err := parseGrants(grants)
			if err != nil {
				return err
			}
			if days < 1 || days > 366 {
				return errors.New("--expires-in-days must be between 1 and 366")
			}
			return change(cmd, func(t *auth.Tokens, l *ledgerstore.Store, as func(string) access.Principal, by string) error {
				secret, tok, err := t.CreateOnRecord(cmd.Context(), l, as, args[0], g, by,
					time.Now().Add(time.Duration(days)*24*time.Hour))
				if err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "token %s of %s, valid until %s; it is shown only now:\n", tok.ID, tok.Principal(), tok.ExpiresAt.Format(time.RFC3339))
				_, err = fmt.Fprintln(cmd.OutOrStdout(), secret)
				return err
			}, func(err error) error {
				// A credential that cannot go on record is not made.
				return fmt.Errorf("no token created: %w (with a running instance, create it on its Admin → API tokens page)", err)
			})
		},
	}
	create.Flags().StringSliceVar(&grants, "grant", nil, "TENANT=ROLE (viewer, auditor or admin; tenant * for all), repeatable")
	create.Flags().IntVar(&days, "expires-in-days", 90, "days until the token expires (1–366)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List tokens (without secrets) as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := tokensFile()
			if err != nil {
				return err
			}
			toks, err := t.List()
			if err != nil {
				return err
			}
			out := make([]auth.TokenState, 0, len(toks))
			for _, tok := range toks {
				out = append(out, tok.At(time.Now()))
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke TOKEN_ID",
		Short: "Revoke a token; a running UI refuses it from its next request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			by, err := local.operator()
			if err != nil {
				return err
			}
			t, err := tokensFile()
			if err != nil {
				return err
			}
			// A revocation takes effect first, whether or not the ledger can
			// be opened: a leaked token must not wait for a running
			// collector to stop.
			if _, err = t.Revoke(args[0], by); err != nil {
				return err
			}
			return change(cmd, func(t *auth.Tokens, l *ledgerstore.Store, as func(string) access.Principal, by string) error {
				tok, err := t.RevokeOnRecord(cmd.Context(), l, as, args[0], by)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "token %s of %s revoked at %s\n", tok.ID, tok.Principal(), tok.RevokedAt.Format(time.RFC3339))
				return err
			}, func(err error) error {
				return fmt.Errorf("token %s is revoked (refused from the next request) but NOT on the access log: %w; revoke it again on the running instance's Admin → API tokens page to record it", args[0], err)
			})
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}
