// Package ledgermetrics reads, from a collector's Prometheus endpoint, what
// the benches that drive docket collector wait for: how far its ledger has
// caught up with the call spans it received.
package ledgermetrics

import (
	"bufio"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/docketlabs/docket/completeness"
)

// Account is the collector's account of call spans received and written,
// summed over tenants, and the ledger exporter's queue size (-1 while the
// collector reports none).
type Account struct {
	Received, Written, Queue int64
}

var (
	stageLine = regexp.MustCompile(fmt.Sprintf(`^otelcol_exporter_ledger_completeness_spans(?:_total)?\{[^}]*stage="(%s|%s)"[^}]*\} (\S+)$`,
		completeness.Received, completeness.Written))
	queueLine = regexp.MustCompile(`^otelcol_exporter_queue_size\{[^}]*exporter="ledger"[^}]*\} (\S+)$`)
)

// Scrape reads the account from the metrics endpoint url.
func Scrape(url string) (Account, error) {
	a := Account{Queue: -1}
	resp, err := http.Get(url)
	if err != nil {
		return a, err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if g := stageLine.FindStringSubmatch(sc.Text()); g != nil {
			n, _ := strconv.ParseFloat(g[2], 64)
			if completeness.Stage(g[1]) == completeness.Written {
				a.Written += int64(n)
			} else {
				a.Received += int64(n)
			}
		} else if g := queueLine.FindStringSubmatch(sc.Text()); g != nil {
			n, _ := strconv.ParseFloat(g[1], 64)
			a.Queue = int64(n)
		}
	}
	return a, sc.Err()
}
