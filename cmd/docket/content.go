package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
)

func contentCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "content",
		Short: "Read stored content through the audited path (from the local data, or a running Docket with --server)",
	}
	cmd.AddCommand(contentGetCommand())
	return cmd
}

func contentGetCommand() *cobra.Command {
	var local localFlags
	var remote remoteFlags
	var traceID, reason string
	cmd := &cobra.Command{
		Use:   "get --trace TRACE_ID --reason REASON REF",
		Short: "Print one stored content object of a call; the read is recorded in the access log",
		Args:  cobra.ExactArgs(1),
		// A denied read is not a usage mistake.
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := contentstore.ParseRef(args[0])
			if err != nil {
				return errors.New("content get: REF is not a content reference")
			}
			ctx := cmd.Context()
			client, err := remote.client(&local, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			var content []byte
			if client != nil {
				// The server's reveal: the same checks, recorded under the
				// token's service account.
				var res struct {
					Content string `json:"content"`
				}
				err = client.Post(ctx, "/api/v1/reveal", map[string]string{"trace_id": traceID, "ref": args[0], "reason": reason}, &res)
				content = []byte(res.Content)
			} else {
				d, oerr := local.open(ctx)
				if oerr != nil {
					return oerr
				}
				defer d.close()
				r := &access.Reader{Content: d.content, Ledger: d.ledger}
				content, err = r.Reveal(ctx, d.operator, access.RevealRequest{Tenant: ref.Tenant, TraceID: traceID, Ref: args[0], Reason: reason})
			}
			if err != nil {
				return fmt.Errorf("content get: %w", err)
			}
			_, err = cmd.OutOrStdout().Write(append(content, '\n'))
			return err
		},
	}
	local.register(cmd.Flags())
	remote.register(cmd.Flags())
	cmd.Flags().StringVar(&traceID, "trace", "", "trace ID (complaint ID) of the call the content belongs to")
	cmd.Flags().StringVar(&reason, "reason", "", "why the content is read; recorded in the access log (required)")
	return cmd
}
