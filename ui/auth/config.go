package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Modes of sign-in.
const (
	ModeBuiltin = "builtin"
	ModeProxy   = "proxy"
)

// Config of sign-in and sessions.
type Config struct {
	// Mode is "builtin" (accounts in UsersFile) or "proxy" (identities
	// asserted by an authenticating proxy in request headers).
	Mode string `mapstructure:"mode"`
	// UsersFile holds the built-in accounts; created with one admin on
	// first start.
	UsersFile string `mapstructure:"users_file"`
	// TokensFile holds the service accounts' API tokens (hashed). In
	// builtin mode it defaults to ui-tokens.json beside UsersFile; in proxy
	// mode API tokens are accepted only when it is set.
	TokensFile string `mapstructure:"tokens_file"`
	// SessionIdleTimeout ends a session nobody used for that long.
	SessionIdleTimeout time.Duration `mapstructure:"session_idle_timeout"`
	// SessionMaxAge ends every session that old.
	SessionMaxAge time.Duration `mapstructure:"session_max_age"`
	// InsecureCookie drops the Secure attribute from the session cookie.
	// Only for plain-HTTP deployments that are not loopback, which should
	// not exist; browsers accept Secure cookies from loopback addresses.
	InsecureCookie bool        `mapstructure:"insecure_cookie"`
	Proxy          ProxyConfig `mapstructure:"proxy"`
}

// ProxyConfig is the trusted-header mode, in oauth2-proxy's convention.
type ProxyConfig struct {
	// TrustedProxies are the addresses (IPs or CIDR prefixes) whose
	// headers are believed; requests from anywhere else are refused.
	TrustedProxies []string `mapstructure:"trusted_proxies"`
	UserHeader     string   `mapstructure:"user_header"`
	GroupsHeader   string   `mapstructure:"groups_header"`
	// Groups and Users map a group or user name to its grants.
	Groups map[string]Grants `mapstructure:"groups"`
	Users  map[string]Grants `mapstructure:"users"`
}

// DefaultConfig is built-in accounts with 30-minute idle and 12-hour
// absolute session lifetimes.
func DefaultConfig(usersFile string) Config {
	return Config{
		Mode:               ModeBuiltin,
		UsersFile:          usersFile,
		SessionIdleTimeout: 30 * time.Minute,
		SessionMaxAge:      12 * time.Hour,
		Proxy: ProxyConfig{
			UserHeader:   "X-Forwarded-User",
			GroupsHeader: "X-Forwarded-Groups",
		},
	}
}

// tokensFile is the tokens file in effect; "" when tokens are off.
func (c *Config) tokensFile() string {
	if c.TokensFile == "" && c.Mode == ModeBuiltin {
		return TokensFileFor(c.UsersFile)
	}
	return c.TokensFile
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.SessionIdleTimeout <= 0 || c.SessionMaxAge <= 0 {
		return errors.New("session_idle_timeout and session_max_age must be positive")
	}
	switch c.Mode {
	case ModeBuiltin:
		if c.UsersFile == "" {
			return errors.New("users_file must be set in builtin mode")
		}
	case ModeProxy:
		return c.Proxy.validate()
	default:
		return fmt.Errorf("mode %q: want %s or %s", c.Mode, ModeBuiltin, ModeProxy)
	}
	return nil
}

func (p *ProxyConfig) validate() error {
	if len(p.TrustedProxies) == 0 {
		return errors.New("proxy.trusted_proxies must name the proxy's addresses")
	}
	if _, err := p.prefixes(); err != nil {
		return err
	}
	if p.UserHeader == "" {
		return errors.New("proxy.user_header must not be empty")
	}
	for name, g := range p.Groups {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("proxy.groups[%s]: %w", name, err)
		}
	}
	for name, g := range p.Users {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("proxy.users[%s]: %w", name, err)
		}
	}
	return nil
}

func (p *ProxyConfig) prefixes() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(p.TrustedProxies))
	for _, s := range p.TrustedProxies {
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("proxy.trusted_proxies: %q: %w", s, err)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		pf, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("proxy.trusted_proxies: %q: %w", s, err)
		}
		out = append(out, pf.Masked())
	}
	return out, nil
}
