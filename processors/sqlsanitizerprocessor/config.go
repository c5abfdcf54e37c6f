package sqlsanitizerprocessor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/sanitize"
)

// Attribute keys from the OpenTelemetry database conventions.
const (
	attrQueryText       = "db.query.text"
	attrStatement       = "db.statement" // deprecated name of db.query.text
	attrSystemName      = "db.system.name"
	attrSystem          = "db.system" // deprecated name of db.system.name
	attrQuerySummary    = "db.query.summary"
	attrOperationName   = "db.operation.name"
	attrParameterPrefix = "db.query.parameter."
	// attrSanitization marks every record whose query text this processor
	// handled: "full" or "partial". Storage keeps query text only when the
	// marker is present.
	attrSanitization = "db.query.sanitization"
)

const maxQueryLengthLimit = 64 << 20

// Config is the sqlsanitizer processor configuration. The zero-option
// configuration (sqlsanitizer: {}) sanitizes db.query.text and db.statement
// on spans, span events and log records.
type Config struct {
	// Attributes are the keys whose values are sanitized in place.
	Attributes []string `mapstructure:"attributes"`
	// DefaultDialect is used when a record carries neither db.system.name
	// nor db.system; empty means the strictest generic rules. Accepts
	// dialect names (postgresql, mysql, sqlite, mssql, oracle, clickhouse,
	// redis, mongodb, json, generic) and db.system.name values.
	DefaultDialect string `mapstructure:"default_dialect"`
	// CollapseLists turns IN (?, ?, ?) and literal-only VALUES rows into (?).
	CollapseLists bool `mapstructure:"collapse_lists"`
	// KeepSQLCommenter keeps sqlcommenter comments (/*key='value'*/) with
	// their values replaced; all other comments are removed.
	KeepSQLCommenter bool `mapstructure:"keep_sqlcommenter"`
	// MySQLANSIQuotes reads MySQL "x" as an identifier (sql_mode ANSI_QUOTES).
	MySQLANSIQuotes bool `mapstructure:"mysql_ansi_quotes"`
	// MaxQueryLength is the number of bytes lexed per query; the rest is
	// replaced by '?' and the record is marked partial.
	MaxQueryLength int `mapstructure:"max_query_length"`
	// FillSummary sets db.query.summary when it is absent.
	FillSummary bool `mapstructure:"fill_summary"`
	// FillOperationName sets db.operation.name when it is absent.
	FillOperationName bool `mapstructure:"fill_operation_name"`
	// KeepParameters lists db.query.parameter.<name> attributes that are
	// kept (as "<name>" or the full key); all others are removed.
	KeepParameters []string `mapstructure:"keep_parameters"`
	// SanitizeLogBody also sanitizes the string body of log records that
	// carry db.system.name or db.system.
	SanitizeLogBody bool `mapstructure:"sanitize_log_body"`
	_               struct{}
}

func createDefaultConfig() *Config {
	return &Config{
		Attributes:     []string{attrQueryText, attrStatement},
		MaxQueryLength: sanitize.DefaultMaxLength,
	}
}

// Validate checks the configuration.
func (cfg *Config) Validate() error {
	var errs []error
	if len(cfg.Attributes) == 0 {
		errs = append(errs, errors.New("attributes: at least one attribute key is required"))
	}
	seen := map[string]bool{}
	for _, key := range cfg.Attributes {
		switch {
		case key == "":
			errs = append(errs, errors.New("attributes: empty key"))
		case seen[key]:
			errs = append(errs, fmt.Errorf("attributes: %q listed twice", key))
		case key == attrSanitization || key == attrSystemName || key == attrSystem:
			errs = append(errs, fmt.Errorf("attributes: %q is not query text", key))
		case strings.HasPrefix(key, attrParameterPrefix):
			errs = append(errs, fmt.Errorf("attributes: %q is a query parameter; parameters are removed unless listed in keep_parameters", key))
		}
		seen[key] = true
	}
	if cfg.DefaultDialect != "" {
		if _, ok := sanitize.ParseDialect(cfg.DefaultDialect); !ok {
			errs = append(errs, fmt.Errorf("default_dialect: unknown dialect %q", cfg.DefaultDialect))
		}
	}
	if cfg.MaxQueryLength <= 0 || cfg.MaxQueryLength > maxQueryLengthLimit {
		errs = append(errs, fmt.Errorf("max_query_length: %d is outside 1..%d", cfg.MaxQueryLength, maxQueryLengthLimit))
	}
	for _, p := range cfg.KeepParameters {
		if parameterName(p) == "" {
			errs = append(errs, fmt.Errorf("keep_parameters: %q names no parameter", p))
		}
	}
	return errors.Join(errs...)
}

// parameterName accepts "name" or "db.query.parameter.name".
func parameterName(p string) string {
	return strings.TrimPrefix(p, attrParameterPrefix)
}

func (cfg *Config) options() sanitize.Options {
	return sanitize.Options{
		MaxLength:        cfg.MaxQueryLength,
		CollapseLists:    cfg.CollapseLists,
		KeepSQLCommenter: cfg.KeepSQLCommenter,
		MySQLANSIQuotes:  cfg.MySQLANSIQuotes,
		Summarize:        cfg.FillSummary || cfg.FillOperationName,
	}
}
