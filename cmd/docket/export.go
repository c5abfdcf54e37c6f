package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

func exportCommand() *cobra.Command {
	var format, out string
	var st storageFlags
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Stream every ledger row to a file (embedded ledger: while the collector is stopped)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "jsonl" {
				return fmt.Errorf("export: unsupported format %q (supported: jsonl)", format)
			}
			ctx := cmd.Context()
			store, err := openStore(ctx, st)
			if err != nil {
				return err
			}
			defer store.Engine().Close()
			var w io.Writer = os.Stdout
			var f *os.File
			if out != "-" {
				if f, err = os.Create(out); err != nil {
					return fmt.Errorf("export: %w", err)
				}
				defer f.Close()
				w = f
			}
			bw := bufio.NewWriterSize(w, 1<<20)
			n := 0
			err = store.ExportCalls(ctx, func(row []byte) error {
				n++
				bw.Write(row)
				return bw.WriteByte('\n')
			})
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("export: write: %w", err)
			}
			if f != nil {
				if err := f.Sync(); err != nil {
					return fmt.Errorf("export: sync: %w", err)
				}
			}
			slog.Info("export complete", "rows", n, "out", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "jsonl", "output format: jsonl")
	cmd.Flags().StringVar(&out, "out", "-", "output file, - for stdout")
	st.register(cmd)
	return cmd
}
