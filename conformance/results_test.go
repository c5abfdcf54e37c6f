package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// Statuses of one field of one call.
const (
	statusOK       = "ok"       // the row holds what the provider returned
	statusGap      = "gap"      // the library never reported it, and the row says so
	statusNA       = "n/a"      // the provider returns no such value for this call
	statusDefect   = "defect"   // the row is wrong, duplicated, missing or leaks
	statusNoRow    = "no row"   // not checked: the call has no row (counted under rows)
	statusUntraced = "untraced" // not checked: the library traced nothing for the call (a gap under rows)
)

// The fields checked for every call, in the matrix's order.
var fields = []string{
	"rows", "provider", "request_model", "response_model", "response_id",
	"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
	"finish_reason", "ttft", "cost", "content",
}

// Results is what one run of the suite found: results.json.
type Results struct {
	Note      string           `json:"note"`
	Scenarios []ScenarioResult `json:"scenarios"`
}

// ScenarioResult is one library setup's run.
type ScenarioResult struct {
	Name     string            `json:"name"`
	Library  string            `json:"library"`
	Versions map[string]string `json:"versions"` // npm package → installed version
	Error    string            `json:"error,omitempty"`
	// CannotRun: the library fails this way, with Error; nothing to check.
	CannotRun bool         `json:"cannot_run,omitempty"`
	Calls     []CallResult `json:"calls"`
}

// CallResult is one provider call: what was asked, what the provider
// answered, and how each ledger field compares.
type CallResult struct {
	Call     string                 `json:"call"`
	API      string                 `json:"api,omitempty"`
	Stream   bool                   `json:"stream,omitempty"`
	Error    string                 `json:"error,omitempty"`
	Requests int                    `json:"provider_requests"`
	Rows     int                    `json:"ledger_rows"`
	Fields   map[string]FieldResult `json:"fields"`
}

// FieldResult is one field's verdict; Observed and Expected are set
// whenever they differ (and for gaps, what the provider returned).
type FieldResult struct {
	Status   string `json:"status"`
	Observed string `json:"observed,omitempty"`
	Expected string `json:"expected,omitempty"`
}

// Defect is one mismatch: an entry of known_defects.json.
type Defect struct {
	Scenario string `json:"scenario"`
	Call     string `json:"call"`
	Field    string `json:"field"`
	Observed string `json:"observed"`
	Expected string `json:"expected"`
}

func (d Defect) String() string {
	return fmt.Sprintf("%s/%s %s: observed %q, expected %q", d.Scenario, d.Call, d.Field, d.Observed, d.Expected)
}

// defects lists every defect of r in a stable order.
func (r *Results) defects() []Defect {
	var out []Defect
	for _, s := range r.Scenarios {
		if s.Error != "" && !s.CannotRun {
			out = append(out, Defect{s.Name, "", "harness", s.Error, "the scenario runs"})
		}
		for _, c := range s.Calls {
			for _, f := range fields {
				if fr := c.Fields[f]; fr.Status == statusDefect {
					out = append(out, Defect{s.Name, c.Call, f, fr.Observed, fr.Expected})
				}
			}
		}
	}
	return out
}

// knownDefects is known_defects.json: the mismatches the extraction still
// has, each exactly as the suite observes it.
type knownDefects struct {
	Note    string   `json:"note"`
	Defects []Defect `json:"defects"`
}

func loadKnownDefects(path string) (knownDefects, error) {
	var k knownDefects
	b, err := os.ReadFile(path)
	if err != nil {
		return k, fmt.Errorf("known defects: %w", err)
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return k, fmt.Errorf("known defects %s: %w", path, err)
	}
	return k, nil
}

// ratchet compares found defects with the known list: new ones and listed
// ones that are now correct are both failures.
func ratchet(found, known []Defect) (unexpected, fixed []Defect) {
	for _, d := range found {
		if !slices.Contains(known, d) {
			unexpected = append(unexpected, d)
		}
	}
	for _, d := range known {
		if !slices.Contains(found, d) {
			fixed = append(fixed, d)
		}
	}
	return unexpected, fixed
}

func loadResults(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	return &r, nil
}

func (r *Results) marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	return append(b, '\n'), err
}
