package storageconfig

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/config/configopaque"
)

func TestValidateDSN(t *testing.T) {
	for dsn, want := range map[string]string{
		"":                                  "dsn is required",
		"clickhouse://u:p@host:9440/docket": "HTTP interface",
		"https://u:p@host:8443/docket":      "",
		"http://u:p@127.0.0.1:8123/docket":  "",
	} {
		err := Config{ClickHouse: &ClickHouseConfig{DSN: configopaque.String(dsn)}}.Validate()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: got %v, want %q", dsn, err, want)
		}
	}
}

func TestValidateCluster(t *testing.T) {
	c := Config{ClickHouse: &ClickHouseConfig{DSN: "https://u:p@host:8443/docket", Cluster: "docket"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.ClickHouse.Cluster = "docket ON CLUSTER x"
	if err := c.Validate(); err == nil {
		t.Fatal("a cluster name that is not an identifier was accepted")
	}
}
