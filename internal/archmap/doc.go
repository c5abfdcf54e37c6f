// Package archmap keeps the architecture map in CONTRIBUTING.md honest: its
// test reads the import graph (`go list -json ./...`) and the shipped
// collector config, checks the allowed import directions, and regenerates
// the map's pictures (`go test ./internal/archmap -update`).
package archmap
