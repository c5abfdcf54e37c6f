package reconcile_test

import (
	"testing"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

var store *ledger.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }
