package conventions

// How an unknown value is shown to people. Unknown is not zero: a cost no
// price covers is shown as UnknownShown, never $0, and a total with unknown
// parts carries UnknownMarker. The ledger's views, its audit exports and the
// price table show them the same way.
const (
	UnknownShown  = "—"
	UnknownMarker = "+?"
)
