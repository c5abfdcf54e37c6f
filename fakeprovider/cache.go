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
	hashes, tokens := prefixes(msgs, snapshot)

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
	if len(prefix) == 0 {
		return 0, 0
	}
	// "explicit" keeps these apart from the automatic cache's prefixes.
	hashes, counts := prefixes(prefix, "explicit", snapshot)
	key, tokens := hashes[len(prefix)-1], counts[len(prefix)-1]
	if tokens < c.cfg.MinTokens {
		return 0, 0
	}
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

// prefixes returns one hash per message boundary — hash i covers the salt
// and messages[0..i] — and the prompt tokens up to each boundary.
func prefixes(msgs []Message, salt ...string) ([][sha256.Size]byte, []int) {
	hashes := make([][sha256.Size]byte, len(msgs))
	tokens := make([]int, len(msgs))
	h := sha256.New()
	for _, s := range salt {
		writeField(h, s)
	}
	total := 0
	for i, m := range msgs {
		writeField(h, m.Role)
		writeField(h, m.Name)
		writeField(h, m.Text)
		h.Sum(hashes[i][:0])
		total += messageTokens(m)
		tokens[i] = total
	}
	return hashes, tokens
}
