// Package schema is the JSON form of the model-lifecycle table, shared by
// the converter that writes it and the package that reads it.
package schema

// Version is the table format written by the converter.
const Version = 1

// File is a whole table.
type File struct {
	Schema  int     `json:"schema"`
	Source  Source  `json:"source"`
	Entries []Entry `json:"entries"`
}

// Source says where the table was converted from.
type Source struct {
	Name     string       `json:"name"`
	Prepared string       `json:"prepared,omitempty"` // date the source files were compiled
	Files    []SourceFile `json:"files,omitempty"`
}

// SourceFile is one input of the conversion.
type SourceFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Entry is one model snapshot (or model family) on one platform. Dates are
// YYYY-MM-DD; empty means not known.
type Entry struct {
	Provider    string   `json:"provider"`
	Model       string   `json:"model"`
	Aliases     []string `json:"aliases,omitempty"`
	Announced   string   `json:"announced,omitempty"`
	Retired     string   `json:"retired,omitempty"`
	Precision   string   `json:"precision"`
	Replacement string   `json:"replacement,omitempty"`
	Sources     []string `json:"sources"`
	VendorPage  string   `json:"vendor_page,omitempty"`
	AsOf        string   `json:"as_of,omitempty"`
}
