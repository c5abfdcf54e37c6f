package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ui/auth"
)

// tokensCommand manages the service accounts' API tokens beside the
// accounts file. A running UI rereads the file, so a revocation here takes
// effect at its next request.
func tokensCommand() *cobra.Command {
	var dataDir, actor string
	cmd := &cobra.Command{Use: "tokens", Short: "Manage API tokens of service accounts (DIR/ui-tokens.json)"}
	cmd.PersistentFlags().StringVar(&dataDir, "data", "data", "data directory (as given to docket dev)")
	cmd.PersistentFlags().StringVar(&actor, "actor", "", "who is acting, put on record (default: the login name)")
	open := func() (*auth.Tokens, string, error) {
		who := actor
		if who == "" {
			if u, err := user.Current(); err == nil {
				who = u.Username
			}
		}
		if who == "" {
			return nil, "", errors.New("--actor is required (no login name found)")
		}
		t, err := auth.OpenTokens(auth.TokensFileFor(usersFile(localFlags{storage: storageFlags{dataDir: dataDir}})))
		return t, who, err
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
			t, who, err := open()
			if err != nil {
				return err
			}
			secret, tok, err := t.Create(args[0], g, who, time.Now().Add(time.Duration(days)*24*time.Hour))
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "token %s of %s, valid until %s; it is shown only now:\n", tok.ID, tok.Principal(), tok.ExpiresAt.Format(time.RFC3339))
			_, err = fmt.Fprintln(cmd.OutOrStdout(), secret)
			return err
		},
	}
	create.Flags().StringSliceVar(&grants, "grant", nil, "TENANT=ROLE (viewer, auditor or admin; tenant * for all), repeatable")
	create.Flags().IntVar(&days, "expires-in-days", 90, "days until the token expires (1–366)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List tokens (without secrets) as JSON",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, _, err := open()
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
			t, who, err := open()
			if err != nil {
				return err
			}
			tok, err := t.Revoke(args[0], who)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "token %s of %s revoked at %s\n", tok.ID, tok.Principal(), tok.RevokedAt.Format(time.RFC3339))
			return err
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}
