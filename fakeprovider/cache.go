package fakeprovider

import (
	"crypto/sha256"
	"sync"
)

// PromptCache shapes prompt_tokens_details.cached_tokens after OpenAI's
// automatic prompt caching: when the leading messages of a prompt were sent
// before to the same snapshot, that prefix counts as cached, in steps of Step
// tokens and only once it reaches MinTokens.
type PromptCache struct {
	Disabled  bool
	MinTokens int // 0 means 1024, OpenAI's threshold
	Step      int // 0 means 128, OpenAI's increment
}

// maxCachedPrefixes bounds the memory of seen prefixes; when full the
// memory starts over, as a real cache evicts.
const maxCachedPrefixes = 1 << 16

type promptCache struct {
	cfg  PromptCache
	mu   sync.Mutex
	seen map[[sha256.Size]byte]struct{}
}

func newPromptCache(cfg PromptCache) *promptCache {
	if cfg.MinTokens == 0 {
		cfg.MinTokens = 1024
	}
	if cfg.Step == 0 {
		cfg.Step = 128
	}
	return &promptCache{cfg: cfg, seen: make(map[[sha256.Size]byte]struct{})}
}

// cachedTokens returns how many prompt tokens of a request count as cached,
// and remembers the request's prefixes for the requests after it.
func (c *promptCache) cachedTokens(snapshot string, msgs []Message) int {
	if c.cfg.Disabled {
		return 0
	}
	// One hash per message boundary: prefix i covers messages[0..i].
	hashes := make([][sha256.Size]byte, len(msgs))
	tokens := make([]int, len(msgs))
	h := sha256.New()
	writeField(h, snapshot)
	total := 0
	for i, m := range msgs {
		writeField(h, m.Role)
		writeField(h, m.Name)
		writeField(h, m.Text)
		h.Sum(hashes[i][:0])
		total += messageTokens(m)
		tokens[i] = total
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	cached := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if _, ok := c.seen[hashes[i]]; ok {
			cached = tokens[i]
			break
		}
	}
	if len(c.seen)+len(hashes) > maxCachedPrefixes {
		clear(c.seen)
	}
	for _, k := range hashes {
		c.seen[k] = struct{}{}
	}

	cached -= cached % c.cfg.Step
	if cached < c.cfg.MinTokens {
		return 0
	}
	return cached
}

// explicit answers a prompt whose prefix the client marked for caching (the
// Messages API's cache_control): the first request writes the prefix to the
// cache, later ones read it. Prefixes shorter than MinTokens are not cached.
func (c *promptCache) explicit(snapshot string, prefix []Message) (read, write int) {
	if c.cfg.Disabled {
		return 0, 0
	}
	h := sha256.New()
	writeField(h, "explicit") // apart from the automatic cache's prefixes
	writeField(h, snapshot)
	tokens := 0
	for _, m := range prefix {
		writeField(h, m.Role)
		writeField(h, m.Name)
		writeField(h, m.Text)
		tokens += messageTokens(m)
	}
	if tokens < c.cfg.MinTokens {
		return 0, 0
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[key]; ok {
		return tokens, 0
	}
	if len(c.seen) >= maxCachedPrefixes {
		clear(c.seen)
	}
	c.seen[key] = struct{}{}
	return 0, tokens
}
