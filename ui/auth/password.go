package auth

import (
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: the RFC 9106 second recommendation (64 MiB, 3
// passes), with parallelism 2 for the small machines Docket runs on.
const (
	argonTime    = 3
	argonMemory  = 64 * 1024
	argonThreads = 2
	argonKeyLen  = 32
	saltLen      = 16
)

// MinPasswordLen is the shortest password accepted for a built-in user.
const MinPasswordLen = 12

// maxPasswordLen bounds the work an attacker can ask the KDF to do.
const maxPasswordLen = 1024

var errMalformedHash = errors.New("auth: malformed password hash")

// HashPassword returns the PHC string of password under Argon2id.
func HashPassword(password string) (string, error) {
	if err := checkPassword(password); err != nil {
		return "", err
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword reports whether password matches the PHC string. The
// parameters come from the string, so hashes made with older settings
// keep working.
func VerifyPassword(phc, password string) (bool, error) {
	if len(password) > maxPasswordLen {
		return false, nil
	}
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errMalformedHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errMalformedHash
	}
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil {
		return false, errMalformedHash
	}
	// Refuse parameters that would let a tampered file exhaust memory.
	if mem == 0 || mem > 1<<20 || iters == 0 || iters > 100 || threads == 0 {
		return false, errMalformedHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errMalformedHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 128 {
		return false, errMalformedHash
	}
	got := argon2.IDKey([]byte(password), salt, iters, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// ErrWeakPassword is returned for passwords outside the accepted length.
var ErrWeakPassword = fmt.Errorf("auth: a password needs %d to %d characters", MinPasswordLen, maxPasswordLen)

// ErrCommonPassword is returned for a password that is, or is built on, a
// commonly used one.
var ErrCommonPassword = errors.New("auth: this password is, or is built on, a commonly used password; choose another")

func checkPassword(p string) error {
	if n := len([]rune(p)); n < MinPasswordLen || len(p) > maxPasswordLen {
		return ErrWeakPassword
	}
	if isCommon(p) {
		return ErrCommonPassword
	}
	return nil
}

// commonPasswords is Mark Burnett's list of the 10,000 most common
// passwords as shipped, lower-cased and deduplicated (7,141 entries), in
// the MIT-licensed zxcvbn-go (github.com/nbutton23/zxcvbn-go,
// data/data/Passwords.json); see commonpasswords.txt.
//
//go:embed commonpasswords.txt
var commonPasswordList string

var commonPasswords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range strings.Fields(commonPasswordList) {
		m[p] = true
	}
	return m
})

// isCommon reports whether p is a common password, one with digits or
// punctuation added before or after it ("Password2024!"), or one short
// piece repeated ("abcabcabcabc"). Few listed passwords reach the minimum
// length; the padded forms are how people reach it.
func isCommon(p string) bool {
	lower := strings.ToLower(p)
	common := commonPasswords()
	if common[lower] {
		return true
	}
	core := strings.TrimFunc(lower, func(r rune) bool {
		return unicode.IsDigit(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.IsSpace(r)
	})
	if len(core) >= 4 && common[core] || core == "" {
		return true
	}
	for unit := 1; unit <= 4 && unit < len(lower); unit++ {
		if len(lower)%unit == 0 && strings.Repeat(lower[:unit], len(lower)/unit) == lower {
			return true
		}
	}
	return false
}

// GeneratePassword returns a random password for a new account, to be
// changed at first sign-in.
func GeneratePassword() string {
	return rand.Text() // 26 base32 characters, 130 bits
}
