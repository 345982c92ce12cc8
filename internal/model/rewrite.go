package model

import (
	"regexp"
	"strings"
)

// Rewritten is the URI a backend receives for a request of path and
// query (without "?") that this location matched: the request's own when
// the location's policy has no Rewrite, else as nginx's "rewrite ...
// break" makes it. A Prefix rewrite replaces the location's path and keeps
// the rest (Strip removing it by path elements); otherwise the location's
// regex (case-insensitive, anchored at the start; the path quoted unless
// the location or its server, regexServer, is in regex mode) is replaced
// with Target, $1..$9 naming its groups, and the query is appended. It is
// the reference the renderer's directives are checked against (test/spec)
// and that `causeway migrate to-gateway` compares conversions with.
func (l *Location) Rewritten(regexServer bool, path, query string) string {
	var rw *Rewrite
	if l.Policy != nil {
		rw = l.Policy.Rewrite
	}
	if rw == nil {
		if query != "" {
			return path + "?" + query
		}
		return path
	}
	target := rw.Target
	if rw.Prefix && l.Match.Type != Regex {
		rest := strings.TrimPrefix(path, strings.TrimSuffix(l.Match.Path, "/"))
		out := target + rest
		if rw.Strip {
			if out = rest; !strings.HasPrefix(out, "/") {
				out = "/" + out
			}
		}
		if query != "" {
			out += "?" + query
		}
		return out
	}
	expr := l.Match.Path
	if !regexServer && l.Match.Type != Regex {
		expr = regexp.QuoteMeta(expr)
	}
	re, err := regexp.Compile("(?i)^(?:" + expr + ")")
	if err != nil {
		return path
	}
	m := re.FindStringSubmatch(path)
	if m == nil {
		return path
	}
	var b strings.Builder
	for i := 0; i < len(target); i++ {
		if target[i] == '$' && i+1 < len(target) && target[i+1] >= '1' && target[i+1] <= '9' {
			if n := int(target[i+1] - '0'); n < len(m) {
				b.WriteString(m[n])
			}
			i++
			continue
		}
		b.WriteByte(target[i])
	}
	out := b.String()
	if query != "" {
		if strings.Contains(out, "?") {
			out += "&" + query
		} else {
			out += "?" + query
		}
	}
	return out
}
