package main

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

type customer struct {
	ID      int
	Email   string
	Name    string
	Plan    string
	Credits int
}

// customerStore is the app's customers table. It lives in memory so the demo
// needs no database server; each lookup is recorded as the client span a
// PostgreSQL driver instrumentation would produce for the same statement.
type customerStore struct {
	tracer  trace.Tracer
	byEmail map[string]customer
}

var (
	firstNames = []string{"Alice", "Bruno", "Chen", "Dana", "Emeka", "Fatima", "Goran", "Hana", "Ivan", "Julia"}
	lastNames  = []string{"Martin", "Okafor", "Novak", "Silva", "Tanaka", "Weber", "Kowalski", "Haddad", "Larsen", "Moreau"}
	plans      = []string{"free", "pro", "team"}
)

// demoEmail is the address of seeded customer i; the load driver uses the same scheme.
func demoEmail(i int) string { return fmt.Sprintf("user%04d@example.com", i) }

// newCustomerStore seeds n customers, user0000@example.com onwards.
func newCustomerStore(tracer trace.Tracer, n int) *customerStore {
	s := &customerStore{tracer: tracer, byEmail: make(map[string]customer, n)}
	for i := range n {
		c := customer{
			ID:      i + 1,
			Email:   demoEmail(i),
			Name:    firstNames[i%len(firstNames)] + " " + lastNames[(i/len(firstNames))%len(lastNames)],
			Plan:    plans[i%len(plans)],
			Credits: 1 + (i*37)%500,
		}
		s.byEmail[c.Email] = c
	}
	return s
}

// findActive returns the customer with this email who has at least
// minCredits credits left.
func (s *customerStore) findActive(ctx context.Context, email string, minCredits int) (customer, bool, error) {
	// Many drivers and ORMs report statements with the values already
	// interpolated; this app does the same on purpose, so that the span carries
	// literals (an email address, a number) for the collector to sanitize.
	// Real code should send $1-style parameters instead.
	query := fmt.Sprintf("SELECT id, name, plan, credits FROM customers WHERE email = %s AND credits >= %d LIMIT 1",
		quoteLiteral(email), minCredits)
	_, span := s.tracer.Start(ctx, "SELECT customers",
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			semconv.DBSystemNamePostgreSQL,
			semconv.DBNamespace("shop"),
			semconv.DBCollectionName("customers"),
			semconv.DBOperationName("SELECT"),
			semconv.DBQuerySummary("SELECT customers"),
			semconv.DBQueryText(query),
		))
	defer span.End()

	if err := ctx.Err(); err != nil {
		span.SetStatus(codes.Error, err.Error())
		return customer{}, false, fmt.Errorf("customers: %w", err)
	}
	c, ok := s.byEmail[email]
	ok = ok && c.Credits >= minCredits
	rows := 0
	if ok {
		rows = 1
	}
	span.SetAttributes(semconv.DBResponseReturnedRows(rows))
	return c, ok, nil
}

// quoteLiteral writes s as a PostgreSQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
