package model

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Basic authentication's password files. nginx's auth_basic reads the file
// on every request and checks the password with its own {SHA}, {SSHA} and
// $apr1$ code, or with the C library's crypt() otherwise (libcrypt on
// Debian, which also does $1$, $5$, $6$ and bcrypt). The grammar below
// accepts only hashes one of them computes, so a typo never turns into a
// user nobody can log in as without a Problem, and never into a plain
// password on disk.

// Limits of a password file: nginx reads it on every request.
const (
	MaxAuthUsers   = 1000
	maxAuthUserLen = 256
	// maxBcryptCost and maxSHACryptRounds bound the work of one request's
	// password check; htpasswd's defaults are 5 and 5000.
	maxBcryptCost     = 12
	maxSHACryptRounds = 100000
)

// ParseHtpasswd checks an htpasswd file: one "user:hash" per line, blank
// lines and lines starting with "#" skipped, CRLF accepted. It returns
// the users' lines, LF-terminated, in their order.
func ParseHtpasswd(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	var out bytes.Buffer
	seen := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want user:hash", i+1)
		}
		if err := AddAuthUser(&out, seen, user, hash); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	if len(seen) == 0 {
		return nil, errors.New("holds no user")
	}
	return out.Bytes(), nil
}

// AddAuthUser checks one user and password hash and appends its line to
// out; seen holds the users so far, which may not repeat (nginx would use
// the first).
func AddAuthUser(out *bytes.Buffer, seen map[string]bool, user, hash string) error {
	if err := checkAuthUser(user); err != nil {
		return err
	}
	if seen[user] {
		return fmt.Errorf("user %q is listed twice", Truncate(user))
	}
	if len(seen) >= MaxAuthUsers {
		return fmt.Errorf("more than %d users", MaxAuthUsers)
	}
	if err := CheckPasswordHash(hash); err != nil {
		return fmt.Errorf("user %q: %w", Truncate(user), err)
	}
	seen[user] = true
	out.WriteString(user)
	out.WriteByte(':')
	out.WriteString(hash)
	out.WriteByte('\n')
	return nil
}

// ParseHtdigest checks an htdigest file, as htdigest writes it: one
// "user:realm:HA1" per line, HA1 the 32 lower-case hex digits of
// MD5(user:realm:password); blank lines and lines starting with "#"
// skipped, CRLF accepted. At least one user must be of realm (the
// location's auth-realm), since only those can log in there. It returns
// the users' lines, LF-terminated, in their order.
func ParseHtdigest(data []byte, realm string) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	var out bytes.Buffer
	seen := map[string]bool{}
	inRealm := 0
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		parts := strings.Split(line, ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("line %d: want user:realm:hash", i+1)
		}
		user, r, ha1 := parts[0], parts[1], parts[2]
		if err := checkAuthUser(user); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if _, err := ParseRealm(r); err != nil {
			return nil, fmt.Errorf("line %d: realm: %w", i+1, err)
		}
		if len(ha1) != 32 || strings.Trim(ha1, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("line %d: user %q: want the 32 lower-case hex digits of MD5(user:realm:password)", i+1, Truncate(user))
		}
		if seen[user+":"+r] {
			return nil, fmt.Errorf("line %d: user %q is listed twice in realm %q", i+1, Truncate(user), r)
		}
		if len(seen) >= MaxAuthUsers {
			return nil, fmt.Errorf("more than %d users", MaxAuthUsers)
		}
		seen[user+":"+r] = true
		if r == realm {
			inRealm++
		}
		out.WriteString(line + "\n")
	}
	if inRealm == 0 {
		return nil, fmt.Errorf("holds no user of realm %q (auth-realm), so nobody could log in", realm)
	}
	return out.Bytes(), nil
}

// checkAuthUser accepts 1 to 256 bytes of UTF-8 without ":" (which ends
// the user in Basic credentials), controls or spaces, not starting with
// "#" (a comment for nginx).
func checkAuthUser(u string) error {
	if u == "" || len(u) > maxAuthUserLen {
		return fmt.Errorf("want a user of 1 to %d bytes", maxAuthUserLen)
	}
	if !utf8.ValidString(u) {
		return errors.New("the user is not valid UTF-8")
	}
	if u[0] == '#' {
		return errors.New(`a user may not start with "#"`)
	}
	for _, r := range u {
		if r == ':' || r <= ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("the user %q holds %q", Truncate(u), r)
		}
	}
	return nil
}

const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// CheckPasswordHash accepts the hash formats nginx checks on Debian:
// {SHA} and {SSHA} (base64 SHA-1), $apr1$ and $1$ (MD5 crypt), $5$ and
// $6$ (SHA-crypt, at most 100000 rounds) and $2a$/$2b$/$2y$ (bcrypt, cost
// 4 to 12). Plain text ({PLAIN} or none) and DES crypt are refused.
func CheckPasswordHash(h string) error {
	switch {
	case strings.HasPrefix(h, "{SHA}"):
		return checkBase64Digest(h[len("{SHA}"):], 20, 20)
	case strings.HasPrefix(h, "{SSHA}"):
		return checkBase64Digest(h[len("{SSHA}"):], 21, 20+64)
	case strings.HasPrefix(h, "$apr1$"):
		return checkCrypt(h[len("$apr1$"):], 8, 22, false)
	case strings.HasPrefix(h, "$1$"):
		return checkCrypt(h[len("$1$"):], 8, 22, false)
	case strings.HasPrefix(h, "$5$"):
		return checkCrypt(h[len("$5$"):], 16, 43, true)
	case strings.HasPrefix(h, "$6$"):
		return checkCrypt(h[len("$6$"):], 16, 86, true)
	case strings.HasPrefix(h, "$2a$"), strings.HasPrefix(h, "$2b$"), strings.HasPrefix(h, "$2y$"):
		return checkBcrypt(h[len("$2y$"):])
	case strings.HasPrefix(h, "{PLAIN}"):
		return errors.New("a plain-text password is refused: hash it (htpasswd -B, or openssl passwd -apr1)")
	}
	return errors.New("want a password hash: {SHA}, {SSHA}, $apr1$, $1$, $5$, $6$ or bcrypt ($2y$); plain text and DES crypt are refused")
}

func checkBase64Digest(s string, minLen, maxLen int) error {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) < minLen || len(b) > maxLen {
		return errors.New("want the base64 of a SHA-1 digest after {SHA} or {SSHA}")
	}
	return nil
}

// checkCrypt checks "salt$hash" (with "rounds=N$" first when rounds).
func checkCrypt(s string, maxSalt, hashLen int, rounds bool) error {
	if rounds {
		if r, ok := strings.CutPrefix(s, "rounds="); ok {
			n, rest, found := strings.Cut(r, "$")
			v, err := strconv.Atoi(n)
			if !found || err != nil || n != strconv.Itoa(v) || v < 1000 || v > maxSHACryptRounds {
				return fmt.Errorf("want rounds=N$ with N from 1000 to %d", maxSHACryptRounds)
			}
			s = rest
		}
	}
	salt, hash, ok := strings.Cut(s, "$")
	if !ok || len(salt) == 0 || len(salt) > maxSalt || !inAlphabet(salt) {
		return fmt.Errorf("want a salt of 1 to %d characters of [./0-9A-Za-z]", maxSalt)
	}
	if len(hash) != hashLen || !inAlphabet(hash) {
		return fmt.Errorf("want a hash of %d characters of [./0-9A-Za-z] after the salt", hashLen)
	}
	return nil
}

// checkBcrypt checks "NN$" and 53 characters of salt and hash.
func checkBcrypt(s string) error {
	cost, rest, ok := strings.Cut(s, "$")
	n, err := strconv.Atoi(cost)
	if !ok || err != nil || len(cost) != 2 || n < 4 || n > maxBcryptCost {
		return fmt.Errorf("want a bcrypt cost from 04 to %d", maxBcryptCost)
	}
	if len(rest) != 53 || !inAlphabet(rest) {
		return errors.New("want 53 characters of [./0-9A-Za-z] of bcrypt salt and hash")
	}
	return nil
}

func inAlphabet(s string) bool {
	return !slices.ContainsFunc([]byte(s), func(c byte) bool { return strings.IndexByte(cryptAlphabet, c) < 0 })
}

// maxRealmLen bounds auth-realm, which nginx sends in every 401.
const maxRealmLen = 128

// ParseRealm checks a basic authentication realm: printable ASCII, at most
// 128 bytes, without '"', '\' (it is sent inside a quoted string, as is),
// or "$" (nginx would expand a variable), and not "off" (which turns
// auth_basic off).
func ParseRealm(s string) (string, error) {
	if len(s) > maxRealmLen {
		return "", fmt.Errorf("want at most %d bytes", maxRealmLen)
	}
	if s == "off" {
		return "", errors.New(`"off" would turn authentication off`)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || c == '"' || c == '\\' || c == '$' {
			return "", fmt.Errorf(`want printable ASCII without '"', '\\' or '$', not %s`, describeByte(c))
		}
	}
	return s, nil
}
