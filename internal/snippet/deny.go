package snippet

import (
	"strconv"
	"strings"
)

// denyingNames are directives that refuse requests, or blocks that guard
// a refusal.
var denyingNames = map[string]bool{"deny": true, "allow": true, "satisfy": true, "if": true, "auth_basic": true,
	"auth_request": true, "auth_jwt": true, "limit_req": true, "limit_conn": true, "limit_except": true}

// Denies reports whether a snippet, even one Parse refuses, looks meant to
// keep some requests out: a statement (text after the start, a newline,
// ";", "{" or "}", comments included) starts with a directive that refuses
// requests (deny, allow, auth_*, limit_*, if, access_by_lua*) or returns a
// status of 400 or more. It reads words, not syntax, so that text the
// tokenizer refuses is judged too; a refused snippet that denies fails
// closed.
func Denies(src string) bool {
	for _, stmt := range strings.FieldsFunc(src, func(r rune) bool { return strings.ContainsRune(";{}\n#", r) }) {
		f := strings.Fields(stmt)
		if len(f) == 0 {
			continue
		}
		if denyingNames[f[0]] || strings.HasPrefix(f[0], "access_by_lua") {
			return true
		}
		if f[0] == "return" && len(f) > 1 {
			if code, err := strconv.Atoi(strings.Trim(f[1], `"'`)); err == nil && code >= 400 {
				return true
			}
		}
	}
	return false
}
