// Package retirement tells whether a model snapshot can still be called: a
// table of announced and actual retirements (shutdowns) of model snapshots
// per platform, with dates, their precision, replacements and sources.
//
//	tbl, err := retirement.Default()
//	st := tbl.Status(providerName, responseModel, time.Now())
//	switch st.State {
//	case retirement.Retired:   // do not call; st.Entry.Retired says since when
//	case retirement.Announced: // callable, flag st.Entry.Retired
//	}
//
// provider is the OpenTelemetry gen_ai.provider.name (or the legacy
// gen_ai.system); model is the response model recorded in the ledger, not the
// requested alias. Names the table does not list are Unknown, never Active.
//
// The shipped table (data/retirements.json, embedded) is converted from the
// files in source/; PROVENANCE.md says where they come from and what the
// conversion keeps. Regenerate it after updating source/:
//
//	go generate ./replay/retirement
package retirement

//go:generate go run ./internal/convert -main source/model_retirements.csv -detailed source/model_retirements_detailed.csv -prepared 2026-11-29 -out data/retirements.json
