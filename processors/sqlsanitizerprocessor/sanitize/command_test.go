package sanitize

import "testing"

func TestRedis(t *testing.T) {
	runCases(t, Redis, Options{}, []sanitizeCase{
		{"value and options", "SET user:1234:session abc123 EX 3600", "SET user:?:session ? ? ?", false},
		{"hash fields", `HMSET myhash field1 "Hello" field2 "World"`, "HMSET myhash ? ? ? ?", false},
		{"auth", "AUTH default s3cret", "AUTH ? ?", false},
		{"all keys", "DEL cart:42 cart:guest", "DEL cart:? cart:guest", false},
		{"multi get", "MGET a:1 b:x", "MGET a:? b:x", false},
		{"alternating keys", "MSET cfg:theme dark cfg:lang en", "MSET cfg:theme ? cfg:lang ?", false},
		{"eval keys", `EVAL "return redis.call('get', KEYS[1])" 2 lock:a lock:b arg1`, "EVAL ? ? lock:a lock:b ?", false},
		{"subcommand", "CONFIG SET maxmemory 100mb", "CONFIG SET ? ?", false},
		{"subcommand with key", "OBJECT ENCODING user:7", "OBJECT ENCODING user:?", false},
		{"e-mail in key", "GET session:bob@example.com", "GET session:?.com", false},
		{"quoted key is masked", `GET "user 1"`, "GET ?", false},
		{"lower case command", "get page:home", "get page:home", false},
		{"module command", "JSON.SET doc:9 $ '{\"a\":1}'", "JSON.SET doc:? ? ?", false},
		{"pipeline", "SET a:b 1\nGET a:b", "SET a:b ?\nGET a:b", false},
		{"redis SET options are not a data block", "SET a:b v EX 10\nGET a:b", "SET a:b ? ? ?\nGET a:b", false},
		{"no arguments", "PING", "PING", false},
		{"unknown command fails closed", "FROBNICATE secret", "?", true},
		{"memcached data block", "set session:abc 0 900 11\r\nhello\nworld\r\nget session:abc\r\n", "set session:abc ? ? ?\r\n?\r\nget session:abc\r\n", false},
		{"memcached short data block", "set k:v 0 0 100\r\nsecret", "set k:v ? ? ?\r\n?", false},
		{"unterminated quote", `SET k:v "secret`, "SET k:v ?", true},
		{"raw RESP fails closed", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$6\r\nsecret\r\n", "?", true},
	})
	res := Sanitize("SET a:b 1\nSET a:c 2", Redis, Options{Summarize: true})
	if res.Operation != "BATCH SET" {
		t.Errorf("pipeline operation %q", res.Operation)
	}
	res = Sanitize("HGETALL h:1", Redis, Options{Summarize: true})
	if res.Operation != "HGETALL" {
		t.Errorf("operation %q", res.Operation)
	}
}

func TestMongoDB(t *testing.T) {
	runCases(t, MongoDB, Options{}, []sanitizeCase{
		{"command document",
			`{"find": "users", "filter": {"email": "a@b.com", "age": {"$gt": 30}}, "limit": 10}`,
			`{"find": "users", "filter": {"email": "?", "age": {"$gt": "?"}}, "limit": "?"}`, false},
		{"arrays, booleans, null",
			`{"update": "orders", "updates": [{"q": {"_id": {"$in": [1, 2, "x"]}}, "u": {"$set": {"paid": true, "note": null}}}]}`,
			`{"update": "orders", "updates": [{"q": {"_id": {"$in": ["?", "?", "?"]}}, "u": {"$set": {"paid": "?", "note": "?"}}}]}`, false},
		{"shell syntax",
			`db.users.find({email: 'x@y.z', created: ISODate("2024-01-01"), name: /^bob[/]x/i, n: -1.5e3})`,
			`db.users.find({email: "?", created: ISODate("?"), name: "?", n: "?"})`, false},
		{"collection kept only for known commands", `{"getMore": "12345", "collection": "users"}`, `{"getMore": "?", "collection": "?"}`, false},
		{"unterminated string", `{"find": "users", "filter": {"a": "secret`, `{"find": "users", "filter": {"a": ?`, true},
		{"unterminated regex", `{a: /secret`, `{a: ?`, true},
	})
	res := Sanitize(`{"aggregate": "orders", "pipeline": []}`, MongoDB, Options{Summarize: true})
	if res.Operation != "aggregate" || res.Summary != "aggregate orders" {
		t.Errorf("operation %q summary %q", res.Operation, res.Summary)
	}
}

func TestJSONDocument(t *testing.T) {
	runCases(t, JSON, Options{}, []sanitizeCase{
		{"search body", `{"query": {"match": {"title": "secret"}}, "size": 10}`, `{"query": {"match": {"title": "?"}}, "size": "?"}`, false},
		{"first value is not special", `{"index": "people"}`, `{"index": "?"}`, false},
		{"control byte", "{\"a\": 1\x00, \"b\": \"secret\"}", `{"a": "?"?`, true},
	})
}
