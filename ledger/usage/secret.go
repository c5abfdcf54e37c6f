package usage

import (
	"fmt"
	"os"
	"strings"
)

// AdminKeyEnv names the environment variable each provider's admin key is
// read from when no key file is given.
var AdminKeyEnv = map[string]string{
	ProviderOpenAI:    "OPENAI_ADMIN_KEY",
	ProviderAnthropic: "ANTHROPIC_ADMIN_KEY",
}

// maxKeyFile bounds a key file: a key is a line, not a document.
const maxKeyFile = 4096

// AdminKey reads provider's admin key from file (its only content, blanks
// around it trimmed) or, when file is "", from AdminKeyEnv. Errors name the
// file or variable, never the key.
func AdminKey(provider, file string) (string, error) {
	if err := CheckProvider(provider); err != nil {
		return "", err
	}
	if file == "" {
		key := strings.TrimSpace(os.Getenv(AdminKeyEnv[provider]))
		if key == "" {
			return "", fmt.Errorf("usage: %s admin key: set %s or give a key file", provider, AdminKeyEnv[provider])
		}
		return key, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("usage: %s admin key file: %w", provider, err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" || len(b) > maxKeyFile || strings.ContainsAny(key, "\r\n\x00") {
		return "", fmt.Errorf("usage: %s admin key file %s: want one key on one line", provider, file)
	}
	return key, nil
}
