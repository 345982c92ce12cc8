package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// API key authentication (NGINX Ingress Controller's apiKey Policy). The
// Lua data plane (causeway.apikey) checks it in the access phase: it
// joins the values of the named headers and query arguments, in order,
// into the supplied key (as NGINX Ingress Controller does); no key
// supplied answers 401, a key whose SHA-256 matches no client's 403. The
// keys never reach the disk: the file holds "client:sha256hex" lines.

// APIKeyAuth asks for an API key.
type APIKeyAuth struct {
	// Headers are header names ParseAPIKeyHeader accepted, Query query
	// argument names ParseQueryParam accepted; at least one is set.
	Headers, Query []string
	// File is the key of an AuthFile (APIKey) in Model.AuthFiles.
	File string
}

// Bounds of an API key Secret.
const (
	maxAPIKeyLen    = 4096
	maxAPIKeyClient = 253
)

// ParseAPIKeyHeader checks a header that carries an API key: 1 to 128
// letters, digits and "-". nginx drops request headers with "_" (unless
// underscores_in_headers is on), so such a name could never carry a key;
// NGINX Ingress Controller refuses "." and "_" too.
func ParseAPIKeyHeader(s string) (string, error) {
	if _, err := ParseHeaderName(s); err != nil {
		return "", err
	}
	if i := strings.IndexAny(s, "_."); i >= 0 {
		return "", fmt.Errorf("header name %q: want letters, digits and -, not %s", Truncate(s), describeByte(s[i]))
	}
	return s, nil
}

// APIKeyVariable is the nginx variable (without "$") that holds a
// header's value: "http_" and the name in lower case with "_" for "-".
func APIKeyVariable(header string) string {
	return "http_" + strings.ReplaceAll(strings.ToLower(header), "-", "_")
}

// ParseAPIKeys checks the data of an nginx.org/apikey Secret, client ID to
// key, and returns its "client:sha256hex" lines, LF-terminated, sorted by
// client. Client IDs are Secret keys (letters, digits, "-", "_", ".");
// keys are 1 to 4096 bytes and, as NGINX Ingress Controller requires, no
// two clients share one. Errors name clients, never keys.
func ParseAPIKeys(data map[string][]byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, errors.New("holds no client")
	}
	if len(data) > MaxAuthUsers {
		return nil, fmt.Errorf("more than %d clients", MaxAuthUsers)
	}
	clients := make([]string, 0, len(data))
	for c := range data {
		clients = append(clients, c)
	}
	slices.Sort(clients)
	byHash := map[string]string{}
	var out bytes.Buffer
	for _, c := range clients {
		if err := checkAPIKeyClient(c); err != nil {
			return nil, err
		}
		key := data[c]
		if len(key) == 0 || len(key) > maxAPIKeyLen {
			return nil, fmt.Errorf("client %q: want a key of 1 to %d bytes", c, maxAPIKeyLen)
		}
		sum := sha256.Sum256(key)
		h := hex.EncodeToString(sum[:])
		if other, ok := byHash[h]; ok {
			return nil, fmt.Errorf("clients %q and %q have the same key", other, c)
		}
		byHash[h] = c
		out.WriteString(c + ":" + h + "\n")
	}
	return out.Bytes(), nil
}

// checkAPIKeyClient accepts a Secret key: 1 to 253 letters, digits, "-",
// "_" and ".".
func checkAPIKeyClient(c string) error {
	if c == "" || len(c) > maxAPIKeyClient {
		return fmt.Errorf("want client IDs of 1 to %d bytes", maxAPIKeyClient)
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.') {
			return fmt.Errorf("client ID %q holds %s", Truncate(c), describeByte(b))
		}
	}
	return nil
}
