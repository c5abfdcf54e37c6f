package sanitize

import (
	"strings"
)

// redisArgs says which arguments of a command are keys. Keys are kept as a
// key pattern (see keyPattern); every other argument becomes '?'.
type redisArgs uint8

const (
	raNone      redisArgs = iota // no keys
	raFirst                      // the first argument is a key
	raAll                        // every argument is a key
	raTwo                        // the first two arguments are keys
	raAlternate                  // key value key value …
	raEval                       // script numkeys key… arg…
	raSub                        // a subcommand, then no keys
	raSubKey                     // a subcommand, then a key
)

var redisCommands = func() map[string]redisArgs {
	m := map[string]redisArgs{}
	add := func(a redisArgs, names string) {
		for _, n := range strings.Fields(names) {
			m[n] = a
		}
	}
	add(raFirst, `GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX APPEND INCR INCRBY INCRBYFLOAT
		DECR DECRBY STRLEN SETRANGE GETRANGE SUBSTR LCS EXPIRE PEXPIRE EXPIREAT PEXPIREAT EXPIRETIME
		PEXPIRETIME TTL PTTL PERSIST TYPE DUMP RESTORE SORT SORT_RO
		HGET HSET HSETNX HMSET HMGET HDEL HGETALL HKEYS HVALS HLEN HEXISTS HINCRBY HINCRBYFLOAT
		HSTRLEN HSCAN HRANDFIELD HEXPIRE HPEXPIRE HTTL HPERSIST HGETDEL HGETEX HSETEX
		LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LRANGE LLEN LINDEX LSET LREM LTRIM LINSERT LPOS
		SADD SREM SMEMBERS SISMEMBER SMISMEMBER SCARD SPOP SRANDMEMBER SSCAN
		ZADD ZREM ZRANGE ZRANGEBYSCORE ZRANGEBYLEX ZREVRANGE ZREVRANGEBYSCORE ZREVRANGEBYLEX
		ZSCORE ZMSCORE ZCARD ZINCRBY ZRANK ZREVRANK ZCOUNT ZLEXCOUNT ZPOPMIN ZPOPMAX ZRANDMEMBER
		ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREMRANGEBYLEX ZSCAN
		XADD XRANGE XREVRANGE XLEN XDEL XTRIM XACK XCLAIM XAUTOCLAIM XPENDING XSETID
		PFADD GEOADD GEODIST GEOPOS GEOHASH GEOSEARCH GEORADIUS GEORADIUSBYMEMBER
		SETBIT GETBIT BITCOUNT BITPOS BITFIELD BITFIELD_RO
		JSON.GET JSON.SET JSON.DEL JSON.FORGET JSON.TYPE JSON.ARRAPPEND JSON.ARRINSERT JSON.ARRLEN
		JSON.ARRPOP JSON.ARRTRIM JSON.ARRINDEX JSON.NUMINCRBY JSON.OBJKEYS JSON.OBJLEN JSON.STRLEN
		JSON.STRAPPEND JSON.CLEAR JSON.TOGGLE JSON.MERGE JSON.RESP
		TS.ADD TS.GET TS.RANGE TS.REVRANGE TS.INCRBY TS.DECRBY TS.CREATE TS.ALTER TS.INFO
		BF.ADD BF.EXISTS BF.MADD BF.MEXISTS BF.RESERVE CF.ADD CF.EXISTS CF.DEL
		ADD CAS PREPEND TOUCH GAT GATS DELETE`)
	add(raAll, `DEL EXISTS UNLINK WATCH MGET SUNION SINTER SDIFF SUNIONSTORE SINTERSTORE
		SDIFFSTORE PFCOUNT PFMERGE BLPOP BRPOP BZPOPMIN BZPOPMAX JSON.MGET`)
	add(raTwo, `RENAME RENAMENX SMOVE RPOPLPUSH BRPOPLPUSH LMOVE BLMOVE COPY`)
	add(raAlternate, `MSET MSETNX`)
	add(raEval, `EVAL EVALSHA EVAL_RO EVALSHA_RO FCALL FCALL_RO`)
	add(raNone, `AUTH HELLO PING ECHO SELECT INFO DBSIZE FLUSHDB FLUSHALL TIME MULTI EXEC DISCARD
		UNWATCH QUIT SAVE BGSAVE BGREWRITEAOF LASTSAVE RANDOMKEY KEYS SCAN PUBLISH SPUBLISH
		SUBSCRIBE SSUBSCRIBE PSUBSCRIBE UNSUBSCRIBE SUNSUBSCRIBE PUNSUBSCRIBE WAIT WAITAOF SWAPDB
		MIGRATE SHUTDOWN ROLE REPLICAOF SLAVEOF MONITOR SYNC PSYNC RESET FAILOVER READONLY
		READWRITE ASKING LOLWUT FT.SEARCH FT.AGGREGATE FT.CREATE FT.INFO FT.DROPINDEX FT.EXPLAIN
		FT._LIST VERSION STATS FLUSH_ALL VERBOSITY`)
	add(raSub, `CONFIG CLIENT CLUSTER SCRIPT COMMAND FUNCTION ACL MODULE SLOWLOG PUBSUB LATENCY`)
	add(raSubKey, `OBJECT MEMORY XINFO XGROUP`)
	return m
}()

const maxRedisCommandLen = 24

func lookupRedis(name string) (redisArgs, bool) {
	if len(name) > maxRedisCommandLen {
		return 0, false
	}
	var b [maxRedisCommandLen]byte
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b[i] = c
	}
	a, ok := redisCommands[string(b[:len(name)])]
	return a, ok
}

// redisLexer rewrites Redis (and Memcached) command text: one command per
// line, arguments separated by blanks, optionally quoted.
type redisLexer struct {
	w         rewriter
	s         string
	partial   bool
	dataBlock int // length of the Memcached data block after this line, or -1
	op        string
	nops      int
	mixed     bool
}

func sanitizeRedis(query, view string, opts Options) Result {
	l := redisLexer{w: rewriter{src: query}, s: view, dataBlock: -1}
	for i := 0; i < len(view); {
		end := strings.IndexByte(view[i:], '\n')
		if end < 0 {
			end = len(view)
		} else {
			end += i
		}
		if !l.line(i, end) {
			break
		}
		i = end + 1
		if l.dataBlock >= 0 && i < len(view) {
			// A Memcached storage command is followed by exactly that
			// many bytes of data, which may contain anything.
			stop := min(i+l.dataBlock, len(view))
			l.w.replace(i, stop, "?")
			i = stop
			l.dataBlock = -1
		}
	}
	var res Result
	res.Text, res.Partial = l.w.finish(view, l.partial)
	if opts.Summarize {
		res.Operation = l.op
		if l.nops > 1 {
			res.Operation = "BATCH"
			if !l.mixed {
				res.Operation = "BATCH " + l.op
			}
		}
	}
	return res
}

// next returns the next argument of the line s[i:end] as [start, stop), or
// start == -1 at the end of the line; ok is false for an unterminated quote.
func (l *redisLexer) next(i, end int) (start, stop int, ok bool) {
	s := l.s
	for i < end && isSpace(s[i]) {
		i++
	}
	if i >= end {
		return -1, -1, true
	}
	start = i
	if q := s[i]; q == '"' || q == '\'' {
		for i++; i < end; i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == q {
				return start, i + 1, true
			}
		}
		return start, end, false
	}
	for i < end && !isSpace(s[i]) {
		i++
	}
	return start, i, true
}

// line rewrites one command; it returns false once the rest of the input
// has been replaced.
func (l *redisLexer) line(i, end int) bool {
	s := l.s
	start, stop, ok := l.next(i, end)
	if start < 0 {
		return true
	}
	if !ok {
		return l.fail(start)
	}
	cmd := s[start:stop]
	if len(cmd) > 1 && (cmd[0] == '*' || cmd[0] == '$') && isDigit(cmd[1]) {
		// Raw RESP framing: arguments and values are not separable here.
		return l.fail(start)
	}
	args, known := lookupRedis(cmd)
	if !known || !isRedisName(cmd) {
		// An unknown command may carry a value anywhere (for example a
		// Memcached data block on its own line).
		return l.fail(start)
	}
	l.countOp(cmd)
	storage := isMemcachedStorage(cmd)
	n := 0 // argument index
	keysLeft := -1
	for {
		a, b, ok := l.next(stop, end)
		if a < 0 {
			return true
		}
		if storage && n >= 1 && n <= 3 {
			// flags, exptime and bytes are all numbers in Memcached;
			// Redis SET never has three numbers there.
			if v := memcachedBytes(s[a:b]); v < 0 {
				storage = false
			} else if n == 3 {
				l.dataBlock = v
			}
		}
		if !ok {
			return l.fail(a)
		}
		stop = b
		arg := s[a:b]
		key := false
		switch args {
		case raFirst:
			key = n == 0
		case raAll:
			key = true
		case raTwo:
			key = n < 2
		case raAlternate:
			key = n%2 == 0
		case raEval:
			switch {
			case n == 1:
				keysLeft = smallCount(arg)
			case n >= 2 && keysLeft > 0:
				key = true
				keysLeft--
			}
		case raSub, raSubKey:
			if n == 0 && isRedisName(arg) {
				n++
				continue
			}
			key = args == raSubKey && n == 1
		}
		n++
		if key && arg[0] != '"' && arg[0] != '\'' {
			if p, changed := keyPattern(arg); changed {
				l.w.replace(a, b, p)
			}
			continue
		}
		l.w.replace(a, b, "?")
	}
}

func (l *redisLexer) countOp(cmd string) {
	l.nops++
	if l.op == "" {
		l.op = cmd
	} else if !strings.EqualFold(l.op, cmd) {
		l.mixed = true
	}
}

func (l *redisLexer) fail(pos int) bool {
	l.w.replace(pos, len(l.w.src), "?")
	l.partial = true
	return false
}

// isMemcachedStorage reports the Memcached commands whose line
// "cmd key flags exptime bytes" is followed by a data block.
func isMemcachedStorage(cmd string) bool {
	switch strings.ToLower(cmd) {
	case "set", "add", "replace", "append", "prepend", "cas":
		return true
	}
	return false
}

// memcachedBytes parses a data block length, or returns -1.
func memcachedBytes(s string) int {
	if len(s) == 0 || len(s) > 9 {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func isRedisName(s string) bool {
	if s == "" || class[s[0]]&cLetter == 0 || s[0] >= 0x80 {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || (class[c]&cIdent == 0 && c != '.' && c != '-') {
			return false
		}
	}
	return true
}

// smallCount parses EVAL's numkeys; anything else gives 0 keys.
func smallCount(s string) int {
	if len(s) == 0 || len(s) > 3 {
		return 0
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// keyPattern keeps the namespace words of a key and replaces every other
// segment with '?': "user:1234:profile" → "user:?:profile". A segment is kept
// only if it is made of ASCII letters, '_' and '-' and is at most 32 bytes,
// so ids, e-mail addresses, hashes and numbers never survive.
func keyPattern(key string) (string, bool) {
	keep := func(seg string) bool {
		if seg == "" || len(seg) > 32 {
			return seg == ""
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if c >= 0x80 || (class[c]&cLetter == 0 && c != '-') {
				return false
			}
		}
		return true
	}
	isDelim := func(c byte) bool {
		return c == ':' || c == '/' || c == '.' || c == '|' || c == '{' || c == '}' || c == '#' || c == ','
	}
	changed := false
	for i, j := 0, 0; j <= len(key); j++ {
		if j < len(key) && !isDelim(key[j]) {
			continue
		}
		if !keep(key[i:j]) {
			changed = true
			break
		}
		i = j + 1
	}
	if !changed {
		return key, false
	}
	out := make([]byte, 0, len(key))
	for i, j := 0, 0; j <= len(key); j++ {
		if j < len(key) && !isDelim(key[j]) {
			continue
		}
		if keep(key[i:j]) {
			out = append(out, key[i:j]...)
		} else {
			out = append(out, '?')
		}
		if j < len(key) {
			out = append(out, key[j])
		}
		i = j + 1
	}
	return string(out), true
}
