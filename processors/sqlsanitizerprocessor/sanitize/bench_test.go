package sanitize

import (
	"strings"
	"testing"
)

var benchQueries = []struct {
	name string
	d    Dialect
	q    string
}{
	{"orm", PostgreSQL, `SELECT "users"."id", "users"."email", "users"."address_line2" FROM "users" WHERE "users"."email" = 'zqk3j9x0@example.com' AND "users"."tenant_id" = 1234567 AND "users"."deleted_at" IS NULL ORDER BY "users"."id" DESC LIMIT 21`},
	{"params", PostgreSQL, "SELECT id, email, address_line2 FROM users WHERE tenant_id = $1 AND email = $2 AND created_at > now() - interval '30 days'"},
	{"bulk", MySQL, "INSERT INTO audit_log2 (tenant_id, actor, action, amount, at) VALUES " + strings.Repeat("(1234567, 'O''zqabcdefgh', 'login', 7654321.25, '2020-01-02 03:04:05.123456'), ", 100) + "(1, 'x', 'y', 2, '2020-01-01')"},
	{"in", Generic, "SELECT id FROM order_items WHERE order_id IN (" + strings.Repeat("1234567, ", 500) + "1)"},
}

func BenchmarkSanitize(b *testing.B) {
	for _, bq := range benchQueries {
		b.Run(bq.name, func(b *testing.B) {
			b.SetBytes(int64(len(bq.q)))
			b.ReportAllocs()
			for b.Loop() {
				Sanitize(bq.q, bq.d, Options{})
			}
		})
	}
}
