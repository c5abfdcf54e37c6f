package sqlsanitizerprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/docketlabs/docket/internal/configtest"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/sanitize"
)

func TestLoadConfig(t *testing.T) {

	tests := []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: createDefaultConfig()},
		{name: "custom", want: &Config{
			Attributes:        []string{conventions.DBQueryText, conventions.DBStatement, "sql.query"},
			DefaultDialect:    "postgresql",
			CollapseLists:     true,
			KeepSQLCommenter:  true,
			MySQLANSIQuotes:   true,
			MaxQueryLength:    65536,
			FillSummary:       true,
			FillOperationName: true,
			KeepParameters:    []string{"limit", "db.query.parameter.page"},
			SanitizeLogBody:   true,
		}},
		{name: "empty_attributes", wantErr: "at least one attribute key is required"},
		{name: "parameter_attribute", wantErr: "is a query parameter"},
		{name: "bad_dialect", wantErr: `unknown dialect "cobol"`},
		{name: "bad_length", wantErr: "max_query_length: 0 is outside"},
		{name: "bad_parameter", wantErr: "names no parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { configtest.Check(t, NewFactory(), tt.name, tt.want, tt.wantErr) })
	}
}

func TestDefaultConfigIsUseful(t *testing.T) {
	cfg := createDefaultConfig()
	require.NoError(t, cfg.Validate())
	assert.Equal(t, []string{attrQueryText, attrStatement}, cfg.Attributes)
	assert.Equal(t, sanitize.DefaultMaxLength, cfg.MaxQueryLength)
}

func TestValidateRejectsDuplicatesAndReservedKeys(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Attributes = []string{conventions.DBQueryText, conventions.DBQueryText, "", attrSanitization}
	err := cfg.Validate()
	require.ErrorContains(t, err, "listed twice")
	require.ErrorContains(t, err, "empty key")
	require.ErrorContains(t, err, "is not query text")
}
