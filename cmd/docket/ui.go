package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ui/api"
	"github.com/docketlabs/docket/ui/apiclient"
	"github.com/docketlabs/docket/ui/auth"
)

func uiCommand() *cobra.Command {
	var addr, certFile, keyFile string
	var local localFlags
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the evidence UI on its own (the embedded ledger must not be open elsewhere)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := local.open(ctx)
			if err != nil {
				return err
			}
			defer d.close()
			authn, oneTime, err := auth.New(auth.DefaultConfig(usersFile(local)))
			if err != nil {
				return err
			}
			logger := slog.Default()
			if err = deliverOneTime(usersFile(local), oneTime); err != nil {
				return err
			}
			m, err := lifecycle.New(d.ledger, d.content, lifecycle.Options{Logger: logger})
			if err != nil {
				return err
			}
			h := api.Handler(api.Deps{Ledger: d.ledger, Content: d.content, Lifecycle: m, Auth: authn,
				ExportDir: filepath.Join(local.storage.dataDir, "exports"), Logger: logger})
			srv, err := api.Listen(api.Listener{Addr: addr, TLSCertFile: certFile, TLSKeyFile: keyFile}, h, logger)
			if err != nil {
				return err
			}
			logger.Info("evidence UI listening", "addr", srv.Addr())
			scheme, ledgerDir := "http://", filepath.Join(local.storage.dataDir, "ledger")
			if certFile != "" {
				scheme = "https://"
			}
			if err := apiclient.Announce(ledgerDir, scheme+srv.Addr()); err != nil {
				logger.Warn("the CLI will not find this UI's address beside the ledger", "err", err)
			}
			defer apiclient.Withdraw(ledgerDir)
			<-ctx.Done()
			return srv.Shutdown(context.Background())
		},
	}
	cmd.Flags().StringVar(&addr, "listen", "127.0.0.1:8080", "listen address (loopback, unless TLS is configured)")
	cmd.Flags().StringVar(&certFile, "tls-cert", "", "TLS certificate file (PEM)")
	cmd.Flags().StringVar(&keyFile, "tls-key", "", "TLS key file (PEM)")
	local.register(cmd.Flags())
	cmd.AddCommand(usersCommand(), tokensCommand())
	return cmd
}

// deliverOneTime shows a created admin's one-time password on the
// terminal, or writes it to a 0600 file and says where.
func deliverOneTime(path, oneTime string) error {
	if oneTime == "" {
		return nil
	}
	file, err := auth.DeliverOneTimePassword(os.Stderr, path, oneTime)
	if file != "" {
		fmt.Fprintf(os.Stderr, "created user \"admin\"; its one-time password is in %s (mode 0600): change it at first sign-in, then delete the file\n", file)
	}
	return err
}

func usersFile(l localFlags) string { return filepath.Join(l.storage.dataDir, "ui-users.json") }

// usersCommand manages the built-in accounts of the UI.
func usersCommand() *cobra.Command {
	var local localFlags
	cmd := &cobra.Command{Use: "users", Short: "Manage the UI's built-in accounts (DIR/ui-users.json)"}
	cmd.PersistentFlags().StringVar(&local.storage.dataDir, "data", "data", "data directory (as given to docket dev)")
	open := func() (*auth.Users, error) {
		users, oneTime, err := auth.OpenUsers(usersFile(local))
		if err != nil {
			return nil, err
		}
		return users, deliverOneTime(usersFile(local), oneTime)
	}
	var grants []string
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Add an account; prints its one-time password",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			g, err := parseGrants(grants)
			if err != nil {
				return err
			}
			users, err := open()
			if err != nil {
				return err
			}
			password, err := users.Add(args[0], g)
			if err != nil {
				return err
			}
			fmt.Printf("user %s added; one-time password (must be changed at first sign-in): %s\n", args[0], password)
			return nil
		},
	}
	add.Flags().StringSliceVar(&grants, "grant", nil, "TENANT=ROLE (viewer, auditor or admin; tenant * for all), repeatable")
	reset := &cobra.Command{
		Use:   "reset-password NAME",
		Short: "Give an account a new one-time password",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			users, err := open()
			if err != nil {
				return err
			}
			password, err := users.ResetPassword(args[0])
			if err != nil {
				return err
			}
			fmt.Printf("one-time password of %s (must be changed at next sign-in): %s\n", args[0], password)
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List accounts and their grants as JSON",
		RunE: func(*cobra.Command, []string) error {
			users, err := open()
			if err != nil {
				return err
			}
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(users.List())
		},
	}
	cmd.AddCommand(add, reset, list)
	return cmd
}

func parseGrants(specs []string) (auth.Grants, error) {
	g := auth.Grants{}
	for _, s := range specs {
		tenant, role, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("--grant %q: want TENANT=ROLE", s)
		}
		g[tenant] = access.Role(role)
	}
	if len(g) == 0 {
		return nil, fmt.Errorf("at least one --grant is required")
	}
	return g, g.Validate()
}
