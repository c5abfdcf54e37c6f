package contentstore

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Scheme is the URI scheme of content references.
const Scheme = "docket-content"

// Limits on the parts of an address. A tenant ends up as one path segment
// of a file name and of an S3 key, so its escaped form must fit a file name.
const (
	MaxTenantLen     = 128
	maxTenantSegment = 255
	maxKindLen       = 64
	digestLen        = 64
)

// Ref is the address of one stored object: tenant, kind of content and the
// keyed hash of the canonical content. Its string form is the opaque URI put
// on spans, docket-content://<tenant>/<kind>/<hex HMAC-SHA256>; it reveals the
// tenant and the kind, never the content, and without the deployment secret
// it cannot be computed from a guess of the content.
type Ref struct {
	Tenant string
	Kind   string
	Digest string
}

// String returns the reference URI.
func (r Ref) String() string {
	return Scheme + "://" + escapeTenant(r.Tenant) + "/" + r.Kind + "/" + r.Digest
}

// key is the object's name inside a backend.
func (r Ref) key() string {
	return escapeTenant(r.Tenant) + "/" + r.Kind + "/" + r.Digest
}

// validate checks every part of the reference.
func (r Ref) validate() error {
	if err := ValidateTenant(r.Tenant); err != nil {
		return err
	}
	if err := ValidateKind(r.Kind); err != nil {
		return err
	}
	if !isDigest(r.Digest) {
		return fmt.Errorf("%w: digest must be %d lowercase hex digits", ErrInvalidRef, digestLen)
	}
	return nil
}

// ParseRef parses a reference URI.
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, Scheme+"://")
	if !ok {
		return Ref{}, fmt.Errorf("%w: scheme must be %s", ErrInvalidRef, Scheme)
	}
	return parseKey(rest)
}

// parseKey parses a backend object name, <tenant>/<kind>/<digest>.
func parseKey(key string) (Ref, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 {
		return Ref{}, fmt.Errorf("%w: want <tenant>/<kind>/<digest>", ErrInvalidRef)
	}
	tenant, err := unescapeTenant(parts[0])
	if err != nil {
		return Ref{}, err
	}
	r := Ref{Tenant: tenant, Kind: parts[1], Digest: parts[2]}
	if err := r.validate(); err != nil {
		return Ref{}, err
	}
	return r, nil
}

// ValidateTenant reports whether a tenant can address content: 1 to
// MaxTenantLen bytes of valid UTF-8 without control characters.
func ValidateTenant(t string) error {
	switch {
	case t == "":
		return fmt.Errorf("%w: empty", ErrInvalidTenant)
	case len(t) > MaxTenantLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidTenant, MaxTenantLen)
	case !utf8.ValidString(t):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidTenant)
	case strings.ContainsFunc(t, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%w: contains control characters", ErrInvalidTenant)
	case len(escapeTenant(t)) > maxTenantSegment:
		return fmt.Errorf("%w: escaped form longer than %d bytes", ErrInvalidTenant, maxTenantSegment)
	}
	return nil
}

// ValidateKind reports whether a kind is usable: 1 to 64 characters of
// [a-z0-9._], starting with a letter or digit, without "..".
func ValidateKind(k string) error {
	if k == "" || len(k) > maxKindLen || k[0] == '.' || strings.Contains(k, "..") {
		return fmt.Errorf("%w: %q", ErrInvalidKind, k)
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_') {
			return fmt.Errorf("%w: %q", ErrInvalidKind, k)
		}
	}
	return nil
}

func isDigest(s string) bool {
	if len(s) != digestLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// escapeTenant makes a tenant one safe path segment: letters, digits, '_',
// '-' and (not first) '.' stay, every other byte becomes %XX. The result is
// never ".", ".." or hidden, and contains no separator.
func escapeTenant(t string) string {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0 {
			b.WriteByte(c)
			continue
		}
		const hexdigits = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hexdigits[c>>4])
		b.WriteByte(hexdigits[c&15])
	}
	return b.String()
}

func unescapeTenant(seg string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		if seg[i] != '%' {
			b.WriteByte(seg[i])
			continue
		}
		if i+2 >= len(seg) {
			return "", fmt.Errorf("%w: bad escape in tenant", ErrInvalidRef)
		}
		hi, lo := unhex(seg[i+1]), unhex(seg[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("%w: bad escape in tenant", ErrInvalidRef)
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	t := b.String()
	if escapeTenant(t) != seg {
		// Only the one canonical spelling addresses an object.
		return "", fmt.Errorf("%w: tenant not in canonical escaped form", ErrInvalidRef)
	}
	return t, nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Errors of the store. Callers test them with errors.Is; messages never
// contain content.
var (
	ErrNotFound             = errors.New("contentstore: object not found")
	ErrTooLarge             = errors.New("contentstore: content larger than max_object_bytes")
	ErrQuotaExceeded        = errors.New("contentstore: quota reached (the tenant's or the store's max_total_bytes)")
	ErrUnavailable          = errors.New("contentstore: store unavailable")
	ErrLegalHold            = errors.New("contentstore: object is on legal hold")
	ErrLegalHoldUnsupported = errors.New("contentstore: legal hold not supported by this store")
	ErrIntegrity            = errors.New("contentstore: stored content does not match its address")
	ErrInvalidTenant        = errors.New("contentstore: invalid tenant")
	ErrInvalidKind          = errors.New("contentstore: invalid kind")
	ErrInvalidRef           = errors.New("contentstore: invalid reference")
	ErrClosed               = errors.New("contentstore: store closed")
)
