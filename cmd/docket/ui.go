package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ui/api"
)

func uiCommand() *cobra.Command {
	var addr string
	var st storageFlags
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the evidence API on its own (the embedded ledger must not be open elsewhere)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			store, err := openStore(ctx, st)
			if err != nil {
				return err
			}
			defer store.Engine().Close()
			logger := slog.Default()
			srv, err := api.Listen(addr, store, logger)
			if err != nil {
				return err
			}
			logger.Info("evidence API listening", "addr", srv.Addr())
			<-ctx.Done()
			return srv.Shutdown(context.Background())
		},
	}
	cmd.Flags().StringVar(&addr, "listen", "127.0.0.1:8080", "listen address (loopback only)")
	st.register(cmd)
	return cmd
}
