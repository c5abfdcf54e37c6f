//go:build tools

// Package tools pins mdatagen and its dependencies (go.mod, go.sum) apart
// from the main module: `go install …@version` cannot build it here.
package tools

import _ "go.opentelemetry.io/collector/cmd/mdatagen"
