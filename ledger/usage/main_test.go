package usage_test

import (
	"testing"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

var store *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }
