// Command sqlsanitizer compares the sqlsanitizer processor's sanitizer with
// DataDog's SQL obfuscators on a generated corpus: throughput (MB/s,
// queries/s, ratio) and what each leaves behind (literal and comment leaks,
// damaged identifiers, rewritten parameter markers).
//
//	go run ./bench/sqlsanitizer [-n 2400] [-seed 1] [-rounds 5] [-round 400ms]
//
// The same runners are Go benchmarks:
//
//	go test -run=NONE -bench=. ./bench/sqlsanitizer/
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 2400, "queries in the corpus (at least 2000)")
	seed := flag.Uint64("seed", 1, "corpus seed")
	perRound := flag.Duration("round", 400*time.Millisecond, "measuring time per sanitizer and round")
	rounds := flag.Int("rounds", 5, "interleaved measuring rounds")
	flag.Parse()
	if *n < 2000 {
		fmt.Fprintln(os.Stderr, "sqlsanitizer bench: -n must be at least 2000")
		os.Exit(2)
	}
	corpus := Corpus(*seed, *n)
	runners := []Runner{DocketRunner(), DataDogObfuscateRunner(), SQLLexerRunner()}
	reports := make([]Report, len(runners))
	for i, r := range runners {
		reports[i] = Check(r, corpus)
	}
	summary := Describe(corpus, *seed, reports[0].Bytes)
	// Only the texts are kept while measuring; the oracle's token lists
	// become garbage here.
	Measure(runners, Texts(corpus), reports, max(*rounds, 1), *perRound)
	Print(os.Stdout, summary, reports)
}

// Describe summarises the corpus for the report header.
func Describe(corpus []Query, seed uint64, bytes int) string {
	kinds := map[string]int{}
	systems := map[string]int{}
	for _, q := range corpus {
		kinds[q.Kind]++
		sys := q.System
		if sys == "" {
			sys = "(none)"
		}
		systems[sys]++
	}
	return fmt.Sprintf("corpus: %d queries, %.2f MB, seed %d\n  kinds:   %s\n  systems: %s\n",
		len(corpus), float64(bytes)/1e6, seed, counts(kinds), counts(systems))
}

// Print writes the comparison table; reports[0] is ours.
func Print(w io.Writer, summary string, reports []Report) {
	fmt.Fprintln(w, summary)
	fmt.Fprintf(w, "%-38s %8s %10s %10s %15s %14s %12s %12s %10s %8s\n",
		"sanitizer", "MB/s", "MB/cpu-s", "queries/s", "literal leaks", "comment leaks", "idents hurt", "markers hurt", "fail-open", "partial")
	for _, r := range reports {
		fmt.Fprintf(w, "%-38s %8.1f %10.1f %10.0f %6d (%4d q) %14d %12d %12d %10d %8d\n",
			r.Name, r.MBps(), r.CPUMBps(), r.QPS(), r.LiteralLeaks, r.LiteralLeakQueries, r.CommentLeakQueries,
			r.IdentDamaged, r.MarkersChanged, r.FailedOpen, r.Partial)
	}
	fmt.Fprintln(w, "(MB/s, queries/s: best wall-clock round; MB/cpu-s: best round by process CPU time, which")
	fmt.Fprintln(w, " includes the garbage collector; literal leaks: tokens (queries); other columns: queries)")
	fmt.Fprintln(w)
	for _, r := range reports[1:] {
		fmt.Fprintf(w, "throughput ratio %s / %s: %.2fx wall, %.2fx cpu\n",
			reports[0].Name, r.Name, reports[0].MBps()/r.MBps(), reports[0].CPUMBps()/r.CPUMBps())
	}
	for _, r := range reports {
		for _, ex := range r.Examples {
			fmt.Fprintf(w, "  %s: %s\n", r.Name, ex)
		}
	}
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", k, m[k])
	}
	return s
}
