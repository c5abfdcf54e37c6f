// Package conformance runs the instrumentation libraries people use (the
// npm packages pinned in js/package.json) against fakeprovider, exports
// their telemetry to a real `docket collector`, and checks every provider
// call's ledger row against what the provider answered. Its tests write
// results.json and the compatibility matrix in the README; known_defects.json
// lists the mismatches still open, and the suite fails when that list is
// wrong in either direction.
package conformance
