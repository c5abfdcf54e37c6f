package sqlsanitizerprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/internal/metadata"
)

// dbSpan builds a trace with one client span carrying query text; system ""
// leaves db.system.name out.
func dbSpan(system, query string) ptrace.Traces {
	td, spans := spantest.Traces(nil)
	spantest.DB(spans, system, query)
	return td
}

func dbLog(system, query string) plog.Logs {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	if system != "" {
		lr.Attributes().PutStr(conventions.DBSystem, system)
	}
	lr.Attributes().PutStr(conventions.DBStatement, query)
	return ld
}

func firstSpan(td ptrace.Traces) ptrace.Span {
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
}

func firstLog(ld plog.Logs) plog.LogRecord {
	return ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

func str(t *testing.T, attrs pcommon.Map, key string) string {
	t.Helper()
	v, ok := attrs.Get(key)
	require.Truef(t, ok, "attribute %s missing", key)
	return v.AsString()
}

// runTraces sends td through a processor built from cfg and returns what
// the next consumer received.
func runTraces(t *testing.T, cfg *Config, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeTraces(context.Background(), td))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, sink.AllTraces(), 1)
	return sink.AllTraces()[0]
}

func runLogs(t *testing.T, cfg *Config, ld plog.Logs) plog.Logs {
	t.Helper()
	sink := new(consumertest.LogsSink)
	p, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, p.ConsumeLogs(context.Background(), ld))
	require.NoError(t, p.Shutdown(context.Background()))
	require.Len(t, sink.AllLogs(), 1)
	return sink.AllLogs()[0]
}

func TestSpansPerDialect(t *testing.T) {
	cases := []struct {
		system, in, want, outcome string
	}{
		{"postgresql", `SELECT "id" FROM "users" WHERE email = 'bob@example.com' AND id = $1`, `SELECT "id" FROM "users" WHERE email = ? AND id = $1`, "full"},
		{"mysql", `SELECT * FROM t WHERE name = "bob" AND covid19 = 42`, `SELECT * FROM t WHERE name = ? AND covid19 = ?`, "full"},
		{"microsoft.sql_server", "SELECT [a] FROM #tmp WHERE x = N'secret' AND y = @p1", "SELECT [a] FROM #tmp WHERE x = ? AND y = @p1", "full"},
		{"oracle", "SELECT q'[it's]' FROM dual WHERE a = :1", "SELECT ? FROM dual WHERE a = :1", "full"},
		{"", `SELECT "secret" FROM t -- note`, "SELECT ? FROM t ", "full"},
		{"postgresql", "SELECT * FROM t WHERE a = 'unterminated secret", "SELECT * FROM t WHERE a = ?", "partial"},
		{"redis", "SET session:9f2c token123", "SET session:? ?", "full"},
		{"mongodb", `{"find": "users", "filter": {"email": "x@y.z"}}`, `{"find": "users", "filter": {"email": "?"}}`, "full"},
	}
	for _, tc := range cases {
		t.Run(tc.system+"/"+tc.in, func(t *testing.T) {
			out := firstSpan(runTraces(t, createDefaultConfig(), dbSpan(tc.system, tc.in)))
			assert.Equal(t, tc.want, str(t, out.Attributes(), conventions.DBQueryText))
			assert.Equal(t, tc.outcome, str(t, out.Attributes(), conventions.QuerySanitization))
		})
	}
}

func TestSpanWithoutQueryIsUntouched(t *testing.T) {
	td := ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr(conventions.HTTPRoute, "/users/{id}")
	span.Attributes().PutStr(conventions.DBSystemName, "postgresql")
	out := firstSpan(runTraces(t, createDefaultConfig(), td))
	assert.Equal(t, map[string]any{conventions.HTTPRoute: "/users/{id}", conventions.DBSystemName: "postgresql"}, out.Attributes().AsRaw())
}

func TestDeprecatedKeysAndResourceSystem(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.DBSystem, "mysql")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr(conventions.DBStatement, `SELECT 1 FROM t WHERE a = "x" # trailing`)
	out := firstSpan(runTraces(t, createDefaultConfig(), td))
	assert.Equal(t, "SELECT ? FROM t WHERE a = ? ", str(t, out.Attributes(), conventions.DBStatement))
	assert.Equal(t, "full", str(t, out.Attributes(), conventions.QuerySanitization))
}

func TestDefaultDialect(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.DefaultDialect = "postgresql"
	out := firstSpan(runTraces(t, cfg, dbSpan("", `SELECT "Name" FROM "Users" WHERE id = 7`)))
	assert.Equal(t, `SELECT "Name" FROM "Users" WHERE id = ?`, str(t, out.Attributes(), conventions.DBQueryText))
}

func TestMarkerIsNeverTrustedButPartialSticks(t *testing.T) {
	forged := dbSpan("postgresql", "SELECT 'secret'")
	firstSpan(forged).Attributes().PutStr(conventions.QuerySanitization, "full")
	out := firstSpan(runTraces(t, createDefaultConfig(), forged))
	assert.Equal(t, "SELECT ?", str(t, out.Attributes(), conventions.DBQueryText))

	cut := dbSpan("postgresql", "SELECT ?")
	firstSpan(cut).Attributes().PutStr(conventions.QuerySanitization, "partial")
	out = firstSpan(runTraces(t, createDefaultConfig(), cut))
	assert.Equal(t, "partial", str(t, out.Attributes(), conventions.QuerySanitization))
}

func TestNonStringQueryFailsClosed(t *testing.T) {
	td := dbSpan("postgresql", "")
	attrs := firstSpan(td).Attributes()
	attrs.PutInt(conventions.DBQueryText, 4111111111111111)
	batch := attrs.PutEmptySlice(conventions.DBStatement)
	batch.AppendEmpty().SetStr("INSERT INTO t VALUES ('a')")
	batch.AppendEmpty().SetBool(true)
	out := firstSpan(runTraces(t, createDefaultConfig(), td)).Attributes()
	assert.Equal(t, "?", str(t, out, conventions.DBQueryText))
	v, _ := out.Get(conventions.DBStatement)
	assert.Equal(t, []any{"INSERT INTO t VALUES (?)", "?"}, v.Slice().AsRaw())
	assert.Equal(t, "partial", str(t, out, conventions.QuerySanitization))
}

func TestParametersDroppedUnlessKept(t *testing.T) {
	td := dbSpan("postgresql", "SELECT * FROM t WHERE a = $1 LIMIT $2")
	attrs := firstSpan(td).Attributes()
	attrs.PutStr("db.query.parameter.0", "alice@example.com")
	attrs.PutStr("db.query.parameter.limit", "10")
	attrs.PutStr("db.query.parameter.page", "3")
	cfg := createDefaultConfig()
	cfg.KeepParameters = []string{"limit", "db.query.parameter.page"}
	out := firstSpan(runTraces(t, cfg, td)).Attributes()
	_, has := out.Get("db.query.parameter.0")
	assert.False(t, has)
	assert.Equal(t, "10", str(t, out, "db.query.parameter.limit"))
	assert.Equal(t, "3", str(t, out, "db.query.parameter.page"))

	// Parameters go even where there is no query text.
	td = ptrace.NewTraces()
	span := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.Attributes().PutStr("db.query.parameter.ssn", "078-05-1120")
	out = firstSpan(runTraces(t, createDefaultConfig(), td)).Attributes()
	assert.Equal(t, 0, out.Len())
}

func TestFillSummaryAndOperation(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.FillSummary, cfg.FillOperationName = true, true
	out := firstSpan(runTraces(t, cfg, dbSpan("postgresql", "SELECT * FROM orders o JOIN customers c ON o.cid = c.id WHERE c.name = 'x'"))).Attributes()
	assert.Equal(t, "SELECT orders customers", str(t, out, "db.query.summary"))
	assert.Equal(t, "SELECT", str(t, out, conventions.DBOperationName))

	td := dbSpan("postgresql", "DELETE FROM t")
	firstSpan(td).Attributes().PutStr("db.query.summary", "from instrumentation")
	firstSpan(td).Attributes().PutStr(conventions.DBOperationName, "DELETE_MANY")
	out = firstSpan(runTraces(t, cfg, td)).Attributes()
	assert.Equal(t, "from instrumentation", str(t, out, "db.query.summary"))
	assert.Equal(t, "DELETE_MANY", str(t, out, conventions.DBOperationName))

	out = firstSpan(runTraces(t, createDefaultConfig(), dbSpan("postgresql", "SELECT 1 FROM t"))).Attributes()
	_, has := out.Get("db.query.summary")
	assert.False(t, has, "summary filled without fill_summary")
}

func TestOptionsReachTheSanitizer(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.CollapseLists, cfg.KeepSQLCommenter = true, true
	out := firstSpan(runTraces(t, cfg, dbSpan("mysql", "SELECT a FROM t WHERE id IN (1, 2) /*app='x'*/"))).Attributes()
	assert.Equal(t, "SELECT a FROM t WHERE id IN (?) /*app='?'*/", str(t, out, conventions.DBQueryText))

	cfg.MaxQueryLength = 40
	out = firstSpan(runTraces(t, cfg, dbSpan("mysql", "SELECT a FROM t WHERE name = 'a very long literal that is cut'"))).Attributes()
	assert.Equal(t, "SELECT a FROM t WHERE name = ?", str(t, out, conventions.DBQueryText))
	assert.Equal(t, "partial", str(t, out, conventions.QuerySanitization))
}

func TestSpanEventsAndCustomKeys(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Attributes = []string{conventions.DBQueryText, "sql.query"}
	td := dbSpan("postgresql", "SELECT 1")
	span := firstSpan(td)
	span.Attributes().PutStr("sql.query", "UPDATE t SET pw = 'hunter2'")
	ev := span.Events().AppendEmpty()
	ev.SetName("retry")
	ev.Attributes().PutStr(conventions.DBQueryText, "SELECT * FROM t WHERE token = 'abc'")
	out := firstSpan(runTraces(t, cfg, td))
	assert.Equal(t, "UPDATE t SET pw = ?", str(t, out.Attributes(), "sql.query"))
	evAttrs := out.Events().At(0).Attributes()
	assert.Equal(t, "SELECT * FROM t WHERE token = ?", str(t, evAttrs, conventions.DBQueryText))
	assert.Equal(t, "full", str(t, evAttrs, conventions.QuerySanitization))
}

func TestLogs(t *testing.T) {
	out := firstLog(runLogs(t, createDefaultConfig(), dbLog("postgresql", "SELECT * FROM t WHERE a = 'x'")))
	assert.Equal(t, "SELECT * FROM t WHERE a = ?", str(t, out.Attributes(), conventions.DBStatement))
	assert.Equal(t, "full", str(t, out.Attributes(), conventions.QuerySanitization))

	// Bodies are left alone unless configured.
	ld := dbLog("postgresql", "SELECT 1")
	firstLog(ld).Body().SetStr("slow query: SELECT * FROM t WHERE a = 'x'")
	out = firstLog(runLogs(t, createDefaultConfig(), ld))
	assert.Equal(t, "slow query: SELECT * FROM t WHERE a = 'x'", out.Body().Str())

	cfg := createDefaultConfig()
	cfg.SanitizeLogBody = true
	ld = plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(conventions.DBSystemName, "postgresql")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("SELECT * FROM t WHERE a = 'x'")
	out = firstLog(runLogs(t, cfg, ld))
	assert.Equal(t, "SELECT * FROM t WHERE a = ?", out.Body().Str())
	assert.Equal(t, "full", str(t, out.Attributes(), conventions.QuerySanitization))

	// Structured bodies: the configured keys inside the map.
	ld = dbLog("mysql", "SELECT 1")
	body := firstLog(ld).Body().SetEmptyMap()
	body.PutStr(conventions.DBQueryText, "SELECT 'secret'")
	out = firstLog(runLogs(t, cfg, ld))
	q, _ := out.Body().Map().Get(conventions.DBQueryText)
	assert.Equal(t, "SELECT ?", q.Str())

	// Records without a database system keep their bodies.
	ld = plog.NewLogs()
	lr = ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("user 'bob' logged in")
	out = firstLog(runLogs(t, cfg, ld))
	assert.Equal(t, "user 'bob' logged in", out.Body().Str())
	assert.Equal(t, 0, out.Attributes().Len())
}

// The processor must be usable from several pipelines at once.
func TestConcurrentUse(t *testing.T) {
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(component.MustNewType("sqlsanitizer")), createDefaultConfig(), sink)
	require.NoError(t, err)
	done := make(chan error, 4)
	for range 4 {
		go func() {
			for range 50 {
				if err := p.ConsumeTraces(context.Background(), dbSpan("postgresql", "SELECT 'x'")); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-done)
	}
	for _, td := range sink.AllTraces() {
		assert.Equal(t, "SELECT ?", str(t, firstSpan(td).Attributes(), conventions.DBQueryText))
	}
}
