package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ui/apiclient"
)

// lifecycleFlags are shared by every lifecycle subcommand.
type lifecycleFlags struct {
	local       localFlags
	remote      remoteFlags
	contentDays int
	ledgerDays  int
	retention   []string
}

func lifecycleCommand() *cobra.Command {
	var lf lifecycleFlags
	cmd := &cobra.Command{
		Use:   "lifecycle",
		Short: "Legal holds, deletion requests and retention expiry (on the local data, or a running Docket with --server)",
		Long: `Legal holds, deletion requests and retention expiry, recorded with who, when,
scope and reason. The operator acts as an admin of every tenant of the local
data; --actor is the name put on record (default: the login name).

A hold beats deletion and expiry; releasing it runs the blocked deletion jobs
of its tenant again. Deletion removes content objects and keeps ledger rows.
Output is JSON on stdout.

With --server URL (and an API token in $DOCKET_TOKEN) the running Docket
does the work, under the token's service account and with its own
retention policy; a deletion request is then also carried out there.`,
	}
	pf := cmd.PersistentFlags()
	lf.local.register(pf)
	lf.remote.register(pf)
	pf.IntVar(&lf.contentDays, "content-days", lifecycle.DefaultContentDays, "content retention in days, all tenants")
	pf.IntVar(&lf.ledgerDays, "ledger-days", lifecycle.DefaultLedgerDays, "ledger retention in days, all tenants")
	pf.StringArrayVar(&lf.retention, "retention", nil, "per-tenant retention TENANT=CONTENT_DAYS:LEDGER_DAYS (either may be empty); repeatable")
	cmd.AddCommand(holdCommand(&lf), deleteCommand(&lf), expireCommand(&lf), eventsCommand(&lf), runsCommand(&lf), orphansCommand(&lf))
	return cmd
}

// session is an opened ledger and content store with a Manager on them.
type session struct {
	m     *lifecycle.Manager
	actor access.Principal
	close func()
}

func (lf *lifecycleFlags) open(ctx context.Context) (*session, error) {
	policy := lifecycle.Policy{Default: lifecycle.Retention{ContentDays: lf.contentDays, LedgerDays: lf.ledgerDays}}
	for _, s := range lf.retention {
		tenant, r, err := lifecycle.ParseTenantRetention(s)
		if err != nil {
			return nil, err
		}
		if policy.Tenants == nil {
			policy.Tenants = map[string]lifecycle.Retention{}
		}
		policy.Tenants[tenant] = r
	}
	if err := policy.Validate(); err != nil {
		return nil, fmt.Errorf("lifecycle: %w", err)
	}
	local, err := lf.local.open(ctx)
	if err != nil {
		return nil, err
	}
	m, err := lifecycle.New(local.ledger, local.content, lifecycle.Options{Policy: policy, Logger: slog.Default()})
	if err != nil {
		local.close()
		return nil, err
	}
	return &session{m: m, actor: local.operator, close: local.close}, nil
}

// run opens a session, calls fn and prints what it returns as JSON; with
// a running Docket to act through, it calls remote instead. A result that
// comes with an error (a job that failed, a hold that could not be
// applied everywhere) is printed before the error is returned. A nil
// remote means the command needs the data directory itself.
func (lf *lifecycleFlags) run(cmd *cobra.Command, fn func(context.Context, *session) (any, error), remote func(context.Context, *apiclient.Client) (any, error)) error {
	ctx := cmd.Context()
	client, err := lf.remote.client(&lf.local, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	var out any
	if client != nil {
		for _, name := range []string{"content-days", "ledger-days", "retention"} {
			if f := cmd.Flag(name); f != nil && f.Changed {
				return fmt.Errorf("--%s does not apply through a running docket: it applies its own retention policy", name)
			}
		}
		if remote == nil {
			return fmt.Errorf("%s reads the content store itself: run it with --data on a stopped directory; a running docket reports the same count as the metric otelcol_extension_docketui_lifecycle_orphan_objects", cmd.CommandPath())
		}
		out, err = remote(ctx, client)
	} else {
		s, oerr := lf.open(ctx)
		if oerr != nil {
			return oerr
		}
		defer s.close()
		out, err = fn(ctx, s)
	}
	if out != nil {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if perr := enc.Encode(out); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
}

// scopeFlags select calls for a hold or a deletion request.
type scopeFlags struct {
	tenant, endUser, trace, from, to, reason string
}

func (sf *scopeFlags) register(cmd *cobra.Command, withRange bool) {
	cmd.Flags().StringVar(&sf.tenant, "tenant", "", "tenant (required)")
	cmd.Flags().StringVar(&sf.endUser, "end-user", "", "only the calls of this end-user reference")
	cmd.Flags().StringVar(&sf.trace, "trace", "", "only the calls of this trace ID")
	if withRange {
		cmd.Flags().StringVar(&sf.from, "from", "", "only calls that started at or after this time (RFC 3339 or YYYY-MM-DD, UTC)")
		cmd.Flags().StringVar(&sf.to, "to", "", "only calls that started before this time (RFC 3339 or YYYY-MM-DD, UTC)")
	}
	cmd.Flags().StringVar(&sf.reason, "reason", "", "why (required, put on record)")
	_ = cmd.MarkFlagRequired("tenant")
	_ = cmd.MarkFlagRequired("reason")
}

func (sf *scopeFlags) scope() (lifecycle.Scope, error) {
	s := lifecycle.Scope{Tenant: sf.tenant, EndUserRef: sf.endUser, TraceID: sf.trace}
	var err error
	if s.From, err = parseInstant("--from", sf.from); err != nil {
		return s, err
	}
	s.To, err = parseInstant("--to", sf.to)
	return s, err
}

// parseInstant reads a time flag; empty is the zero time.
func parseInstant(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s must be RFC 3339 (2026-03-01T12:00:00Z) or a date (2026-03-01)", flag)
}

func holdCommand(lf *lifecycleFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "hold", Short: "Create, release and list legal holds"}

	var sf scopeFlags
	create := &cobra.Command{
		Use:   "create",
		Short: "Put a tenant, an end user, a trace or a time range on legal hold",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			scope, err := sf.scope()
			if err != nil {
				return err
			}
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				h, applied, err := s.m.CreateHold(ctx, s.actor, lifecycle.HoldRequest{Scope: scope, Reason: sf.reason})
				if h.ID == "" {
					return nil, err
				}
				return struct {
					Hold    lifecycle.Hold        `json:"hold"`
					Applied lifecycle.HoldApplied `json:"applied"`
				}{h, applied}, err
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				var res struct {
					Hold    lifecycle.Hold        `json:"hold"`
					Applied lifecycle.HoldApplied `json:"applied"`
				}
				if err := c.Post(ctx, "/api/v1/holds", lifecycle.HoldRequest{Scope: scope, Reason: sf.reason}, &res); err != nil {
					return nil, err
				}
				return res, nil
			})
		},
	}
	sf.register(create, true)

	var releaseReason string
	release := &cobra.Command{
		Use:   "release HOLD_ID",
		Short: "Release a legal hold and run the deletion jobs it blocked",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				res, err := s.m.ReleaseHold(ctx, s.actor, args[0], releaseReason)
				if res.Hold.ID == "" {
					return nil, err
				}
				return res, err
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				var res lifecycle.ReleaseResult
				if err := c.Post(ctx, "/api/v1/holds/"+url.PathEscape(args[0])+"/release", map[string]string{"reason": releaseReason}, &res); err != nil {
					return nil, err
				}
				return res, nil
			})
		},
	}
	release.Flags().StringVar(&releaseReason, "reason", "", "why (required, put on record)")
	_ = release.MarkFlagRequired("reason")

	var filter lifecycle.HoldFilter
	list := &cobra.Command{
		Use:   "list",
		Short: "List holds in their current state, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				return listResult(s.m.Holds(ctx, s.actor, filter))
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				var res struct {
					Holds []lifecycle.Hold `json:"holds"`
				}
				err := c.Get(ctx, "/api/v1/holds"+query("tenant", filter.Tenant, "status", filter.Status), &res)
				return listResult(res.Holds, err)
			})
		},
	}
	list.Flags().StringVar(&filter.Tenant, "tenant", "", "only this tenant")
	list.Flags().StringVar(&filter.Status, "status", "", "active or released")

	cmd.AddCommand(create, release, list)
	return cmd
}

func deleteCommand(lf *lifecycleFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "delete", Short: "Request deletion of content and follow the jobs"}

	var sf scopeFlags
	request := &cobra.Command{
		Use:   "request",
		Short: "Delete the content of a tenant's, an end user's or a trace's calls (ledger rows stay)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			scope, err := sf.scope()
			if err != nil {
				return err
			}
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				job, err := s.m.RequestDeletion(ctx, s.actor, lifecycle.DeletionRequest{Scope: scope, Reason: sf.reason})
				if job.ID == "" {
					return nil, err
				}
				return job, err
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				var res struct {
					Job lifecycle.DeletionJob `json:"job"`
				}
				if err := c.Post(ctx, "/api/v1/deletions", lifecycle.DeletionRequest{Scope: scope, Reason: sf.reason}, &res); err != nil {
					return nil, err
				}
				return awaitJob(ctx, c, res.Job)
			})
		},
	}
	sf.register(request, false)

	run := &cobra.Command{
		Use:   "run JOB_ID",
		Short: "Run a deletion job again (idempotent)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				job, err := s.m.RunDeletion(ctx, s.actor, args[0])
				if job.ID == "" {
					return nil, err
				}
				return job, err
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				var res struct {
					Job   lifecycle.DeletionJob `json:"job"`
					Error string                `json:"error"`
				}
				if err := c.Post(ctx, "/api/v1/deletions/"+url.PathEscape(args[0])+"/run", nil, &res); err != nil {
					return nil, err
				}
				return res.Job, remoteErr(res.Error)
			})
		},
	}

	var filter lifecycle.JobFilter
	status := &cobra.Command{
		Use:   "status [JOB_ID]",
		Short: "Show one job with its history, or list jobs newest first",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				if len(args) == 0 {
					return listResult(s.m.DeletionJobs(ctx, s.actor, filter))
				}
				job, history, err := s.m.DeletionJob(ctx, s.actor, args[0])
				if err != nil {
					return nil, err
				}
				return struct {
					Job     lifecycle.DeletionJob   `json:"job"`
					History []lifecycle.DeletionJob `json:"history"`
				}{job, history}, nil
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				if len(args) == 0 {
					var res struct {
						Jobs []lifecycle.DeletionJob `json:"jobs"`
					}
					err := c.Get(ctx, "/api/v1/deletions"+query("tenant", filter.Tenant, "status", filter.Status), &res)
					return listResult(res.Jobs, err)
				}
				var res struct {
					Job     lifecycle.DeletionJob   `json:"job"`
					History []lifecycle.DeletionJob `json:"history"`
				}
				if err := c.Get(ctx, "/api/v1/deletions/"+url.PathEscape(args[0]), &res); err != nil {
					return nil, err
				}
				return res, nil
			})
		},
	}
	status.Flags().StringVar(&filter.Tenant, "tenant", "", "only this tenant")
	status.Flags().StringVar(&filter.Status, "status", "", "pending, running, blocked_by_hold, done or failed")

	cmd.AddCommand(request, run, status)
	return cmd
}

func expireCommand(lf *lifecycleFlags) *cobra.Command {
	var opts lifecycle.ExpireOptions
	cmd := &cobra.Command{
		Use:   "expire",
		Short: "Apply retention now: expire content and ledger rows past it, except what is held",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Progress = func(p lifecycle.Progress) {
				slog.Info("expiry", "phase", p.Phase, "tenant", p.Tenant, "dry_run", p.DryRun,
					"objects_scanned", p.Counts.ObjectsScanned, "objects_expired", p.Counts.ObjectsExpired,
					"calls_expired", p.Counts.CallsExpired)
			}
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				run, err := s.m.Expire(ctx, s.actor, opts)
				if run.ID == "" {
					return nil, err
				}
				return run, err
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				fmt.Fprintln(cmd.ErrOrStderr(), "expiry: running on the server")
				var res struct {
					Run   lifecycle.ExpiryRun `json:"run"`
					Error string              `json:"error"`
				}
				body := map[string]any{"dry_run": opts.DryRun, "tenant": opts.Tenant, "reason": opts.Reason}
				if err := c.Post(ctx, "/api/v1/lifecycle/expire", body, &res); err != nil {
					return nil, err
				}
				return res.Run, remoteErr(res.Error)
			})
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "count what would expire, change nothing")
	cmd.Flags().StringVar(&opts.Tenant, "tenant", "", "only this tenant (default: all)")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why (default: retention policy)")
	return cmd
}

func eventsCommand(lf *lifecycleFlags) *cobra.Command {
	var filter lifecycle.EventFilter
	cmd := &cobra.Command{
		Use:   "events",
		Short: "List what happened to content objects: deleted, expired, held, released",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				return listResult(s.m.ContentEvents(ctx, s.actor, filter))
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				var res struct {
					Events []lifecycle.ContentEvent `json:"events"`
				}
				err := c.Get(ctx, "/api/v1/lifecycle/events"+query("tenant", filter.Tenant, "ref", filter.Ref, "job", filter.JobID,
					"hold", filter.HoldID, "limit", strconv.FormatUint(filter.Limit, 10)), &res)
				return listResult(res.Events, err)
			})
		},
	}
	cmd.Flags().StringVar(&filter.Tenant, "tenant", "", "only this tenant")
	cmd.Flags().StringVar(&filter.Ref, "ref", "", "only this content reference")
	cmd.Flags().StringVar(&filter.JobID, "job", "", "only this deletion job or expiry run")
	cmd.Flags().StringVar(&filter.HoldID, "hold", "", "only this hold")
	cmd.Flags().Uint64Var(&filter.Limit, "limit", 1000, "at most this many events")
	return cmd
}

func orphansCommand(lf *lifecycleFlags) *cobra.Command {
	var opts lifecycle.OrphanOptions
	cmd := &cobra.Command{
		Use:   "orphans",
		Short: "Count content objects the ledger references nowhere (out of reach of deletion and holds); changes nothing",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				report, err := s.m.Orphans(ctx, s.actor, opts)
				if err != nil {
					return nil, err
				}
				return report, nil
			}, nil)
		},
	}
	cmd.Flags().StringVar(&opts.Tenant, "tenant", "", "only this tenant (default: all)")
	cmd.Flags().DurationVar(&opts.Grace, "grace", lifecycle.DefaultOrphanGrace, "judge only objects stored longer ago than this (their ledger rows may still be queued)")
	return cmd
}

func runsCommand(lf *lifecycleFlags) *cobra.Command {
	var limit uint64
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List expiry runs, dry runs included, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lf.run(cmd, func(ctx context.Context, s *session) (any, error) {
				return listResult(s.m.ExpiryRuns(ctx, s.actor, limit))
			}, func(ctx context.Context, c *apiclient.Client) (any, error) {
				var res struct {
					Runs []lifecycle.ExpiryRun `json:"expiry_runs"`
				}
				err := c.Get(ctx, "/api/v1/lifecycle"+query("limit", strconv.FormatUint(limit, 10)), &res)
				return listResult(res.Runs, err)
			})
		},
	}
	cmd.Flags().Uint64Var(&limit, "limit", 100, "at most this many runs")
	return cmd
}

// query builds "?k=v&…" from the non-empty pairs.
func query(pairs ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// remoteErr is the error a server reported beside its result.
// awaitJob follows a job the server runs in the background until its run
// ends, so that a request through the server prints what the embedded mode
// prints: the job after its run, and its error if the run failed.
func awaitJob(ctx context.Context, c *apiclient.Client, job lifecycle.DeletionJob) (lifecycle.DeletionJob, error) {
	for job.Status == lifecycle.JobPending || job.Status == lifecycle.JobRunning {
		select {
		case <-ctx.Done():
			return job, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		var res struct {
			Job lifecycle.DeletionJob `json:"job"`
		}
		if err := c.Get(ctx, "/api/v1/deletions/"+url.PathEscape(job.ID), &res); err != nil {
			return job, err
		}
		job = res.Job
	}
	if job.Status == lifecycle.JobFailed {
		return job, fmt.Errorf("lifecycle: deletion job %s: %s", job.ID, job.Error)
	}
	return job, nil
}

func remoteErr(msg string) error {
	if msg == "" {
		return nil
	}
	return errors.New(msg)
}

// listResult prints an empty list as [] rather than null, and nothing on
// an error.
func listResult[T any](s []T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = []T{}
	}
	return s, nil
}
