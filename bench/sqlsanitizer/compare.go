package main

import (
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/DataDog/datadog-agent/pkg/obfuscate"
	"github.com/DataDog/go-sqllexer"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/sanitize"
)

// Status is how a runner finished a query.
type Status uint8

const (
	StatusOK         Status = iota
	StatusPartial           // part of the text was replaced wholesale (fail closed)
	StatusFailedOpen        // the runner gave up; its caller keeps the original text, as the contrib redaction processor does on an obfuscation error
)

// Runner is one sanitizer under test.
type Runner struct {
	Name string
	Run  func(q *Query) (string, Status)
}

// DocketRunner is this project's sanitizer with the processor's defaults.
func DocketRunner() Runner {
	return Runner{
		Name: "docket sanitize",
		Run: func(q *Query) (string, Status) {
			res := sanitize.Sanitize(q.Text, DialectOf(*q), sanitize.Options{})
			if res.Partial {
				return res.Text, StatusPartial
			}
			return res.Text, StatusOK
		},
	}
}

// DataDogObfuscateRunner is datadog-agent/pkg/obfuscate configured exactly as
// the contrib redaction processor's db_sanitizer configures it. It is given
// the best DBMS hint available for each query; no cache.
func DataDogObfuscateRunner() Runner {
	o := obfuscate.NewObfuscator(obfuscate.Config{
		SQL: obfuscate.SQLConfig{
			ReplaceDigits:    true,
			KeepSQLAlias:     true,
			DollarQuotedFunc: true,
			ObfuscationMode:  obfuscate.ObfuscateOnly,
		},
	})
	return Runner{
		Name: "datadog obfuscate (contrib settings)",
		Run: func(q *Query) (string, Status) {
			res, err := o.ObfuscateSQLStringForDBMS(q.Text, datadogDBMS(q.System))
			if err != nil {
				return q.Text, StatusFailedOpen
			}
			return res.Query, StatusOK
		},
	}
}

// SQLLexerRunner is DataDog's go-sqllexer obfuscator used directly, in its
// most faithful setting: digits in identifiers and positional parameters
// are left alone.
func SQLLexerRunner() Runner {
	o := sqllexer.NewObfuscator(sqllexer.WithReplaceDigits(false), sqllexer.WithDollarQuotedFunc(false))
	return Runner{
		Name: "go-sqllexer obfuscator",
		Run: func(q *Query) (string, Status) {
			return o.Obfuscate(q.Text, sqllexer.WithDBMS(sqllexer.DBMSType(datadogDBMS(q.System)))), StatusOK
		},
	}
}

func datadogDBMS(system string) string {
	switch system {
	case "postgresql":
		return "postgresql"
	case "mysql", "mariadb":
		return "mysql"
	case "mssql", "microsoft.sql_server":
		return "mssql"
	case "oracle", "oracle.db":
		return "oracle"
	}
	return ""
}

// Report is what one runner did to the corpus.
type Report struct {
	Name               string
	Queries, Bytes     int
	NsPerPass          float64 // best wall time of one pass over the corpus
	CPUNsPerPass       float64 // best CPU time of one pass over the corpus
	LiteralLeakQueries int     // queries with at least one literal token in the output
	LiteralLeaks       int     // literal tokens found in outputs
	CommentLeakQueries int     // queries with comment text in the output
	IdentDamaged       int     // queries where a name with digits did not survive
	MarkersChanged     int     // queries where a parameter marker did not survive
	FailedOpen         int     // queries passed through unchanged on error
	Partial            int     // queries partly replaced wholesale
	Examples           []string
}

// MBps is the input throughput in megabytes per second.
func (r Report) MBps() float64 { return float64(r.Bytes) / r.NsPerPass * 1e3 }

// CPUMBps is the input throughput per CPU second.
func (r Report) CPUMBps() float64 { return float64(r.Bytes) / r.CPUNsPerPass * 1e3 }

// QPS is the throughput in queries per second.
func (r Report) QPS() float64 { return float64(r.Queries) / r.NsPerPass * 1e9 }

// Check runs the oracle over the corpus.
func Check(run Runner, corpus []Query) Report {
	rep := Report{Name: run.Name, Queries: len(corpus)}
	for i := range corpus {
		q := &corpus[i]
		rep.Bytes += len(q.Text)
		out, status := run.Run(q)
		switch status {
		case StatusFailedOpen:
			rep.FailedOpen++
		case StatusPartial:
			rep.Partial++
		}
		leaked := ""
		for _, tok := range q.Literals {
			if strings.Contains(out, tok) {
				rep.LiteralLeaks++
				leaked = tok
			}
		}
		if leaked != "" {
			rep.LiteralLeakQueries++
			if len(rep.Examples) < 3 {
				rep.Examples = append(rep.Examples, q.Kind+" ["+q.System+"] leaks "+leaked+": "+excerpt(out, leaked))
			}
		}
		for _, tok := range q.Comments {
			if strings.Contains(out, tok) {
				rep.CommentLeakQueries++
				break
			}
		}
		for _, id := range q.Identifiers {
			if !strings.Contains(out, id) {
				rep.IdentDamaged++
				break
			}
		}
		for _, m := range q.Markers {
			if !strings.Contains(out, m) {
				rep.MarkersChanged++
				break
			}
		}
	}
	return rep
}

// Texts keeps only what the runners read, so that measuring does not also
// time the garbage collector walking the oracle's token lists.
func Texts(corpus []Query) []Query {
	out := make([]Query, len(corpus))
	for i, q := range corpus {
		out[i] = Query{System: q.System, Text: q.Text}
	}
	return out
}

// Measure times whole corpus passes for every runner. The machine may be
// shared, so runners are measured in interleaved rounds, by wall clock and by
// the CPU time the process used (which other processes do not inflate), and
// each keeps its best round.
func Measure(runners []Runner, corpus []Query, reports []Report, rounds int, perRound time.Duration) {
	for range rounds {
		for i, run := range runners {
			pass := func() {
				for k := range corpus {
					run.Run(&corpus[k])
				}
			}
			pass() // warm up
			runtime.GC()
			cpu0, wall0 := cpuTime(), time.Now()
			passes := 0
			for time.Since(wall0) < perRound || passes < 2 {
				pass()
				passes++
			}
			wall := float64(time.Since(wall0).Nanoseconds()) / float64(passes)
			cpu := float64((cpuTime() - cpu0).Nanoseconds()) / float64(passes)
			r := &reports[i]
			if r.NsPerPass == 0 || wall < r.NsPerPass {
				r.NsPerPass = wall
			}
			if r.CPUNsPerPass == 0 || cpu < r.CPUNsPerPass {
				r.CPUNsPerPass = cpu
			}
		}
	}
}

// cpuTime is the user and system CPU time used by this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func excerpt(s, around string) string {
	i := strings.Index(s, around)
	start, end := max(i-60, 0), min(i+len(around)+20, len(s))
	return strings.ReplaceAll(s[start:end], "\n", " ")
}
