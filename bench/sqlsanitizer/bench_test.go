package main

import (
	"slices"
	"strings"
	"testing"
)

const (
	benchSeed = 1
	benchSize = 2400
)

func TestCorpus(t *testing.T) {
	a, b := Corpus(benchSeed, benchSize), Corpus(benchSeed, benchSize)
	if len(a) < 2000 {
		t.Fatalf("corpus has %d queries, want at least 2000", len(a))
	}
	if !slices.EqualFunc(a, b, func(x, y Query) bool { return x.Text == y.Text }) {
		t.Fatal("corpus differs between two runs with the same seed")
	}
	if c := Corpus(benchSeed+1, 50); c[0].Text == a[0].Text && c[1].Text == a[1].Text {
		t.Error("seed does not change the corpus")
	}
	kinds, systems := map[string]bool{}, map[string]bool{}
	for _, q := range a {
		kinds[q.Kind] = true
		systems[DialectOf(q).String()] = true
		if len(q.Literals)+len(q.Markers) == 0 {
			t.Errorf("%s query carries neither literals nor markers: %q", q.Kind, q.Text)
		}
		// Every oracle token must be in the input, or the oracle checks nothing.
		for _, group := range [][]string{q.Literals, q.Comments, q.Identifiers, q.Markers} {
			for _, tok := range group {
				if !strings.Contains(q.Text, tok) {
					t.Fatalf("%s query: token %q not in %q", q.Kind, tok, q.Text)
				}
			}
		}
	}
	if len(kinds) < 12 || len(systems) < 7 {
		t.Errorf("corpus covers %d kinds and %d dialects", len(kinds), len(systems))
	}
}

// The sanitizer must pass its own oracle on the whole corpus.
func TestDocketOracle(t *testing.T) {
	rep := Check(DocketRunner(), Corpus(benchSeed, benchSize))
	if rep.LiteralLeaks != 0 || rep.CommentLeakQueries != 0 || rep.IdentDamaged != 0 || rep.MarkersChanged != 0 || rep.FailedOpen != 0 || rep.Partial != 0 {
		t.Errorf("oracle findings: %+v", rep)
	}
}

// BenchmarkSanitizers measures one pass over the corpus per op; MB/s is
// input throughput.
func BenchmarkSanitizers(b *testing.B) {
	corpus := Texts(Corpus(benchSeed, benchSize))
	size := 0
	for _, q := range corpus {
		size += len(q.Text)
	}
	for _, r := range []Runner{DocketRunner(), DataDogObfuscateRunner(), SQLLexerRunner()} {
		b.Run(strings.ReplaceAll(r.Name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for i := range corpus {
					r.Run(&corpus[i])
				}
			}
			b.ReportMetric(float64(len(corpus))*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
