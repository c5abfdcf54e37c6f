package replay

import (
	"fmt"

	"github.com/docketlabs/docket/replay/providers"
)

// ClientsFromEnv builds a client per gen_ai.provider.name from the
// environment, as the vendors' SDKs read it (OPENAI_BASE_URL,
// OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY); openaiAPI picks
// the OpenAI API replays are sent to.
func ClientsFromEnv(openaiAPI providers.API, stream bool, getenv func(string) string) (map[string]*providers.Client, error) {
	if openaiAPI != providers.ChatCompletions && openaiAPI != providers.Responses {
		return nil, fmt.Errorf("the OpenAI API must be %s or %s", providers.ChatCompletions, providers.Responses)
	}
	clients := map[string]*providers.Client{}
	for name, api := range map[string]providers.API{"openai": openaiAPI, "anthropic": providers.Messages} {
		cfg := providers.FromEnv(api, getenv)
		cfg.Stream = stream
		c, err := providers.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s client: %w", name, err)
		}
		clients[name] = c
	}
	return clients, nil
}
