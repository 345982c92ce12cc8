// Package modsec reads ModSecurity snippets (ingress-nginx's
// modsecurity-snippet, in the annotation and the ConfigMap) into the
// model's typed directives: a tokenizer for ModSecurity's configuration
// language and an allowlist of directives, each read with the grammar of
// model/secgrammar.go. Whatever it cannot classify it refuses, naming the
// directive, so a snippet can only ask for what model.SecRules can
// express, and never for a file, a program or the network.
package modsec

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/causeway/causeway/internal/model"
)

// Limits on a snippet. The ConfigMap's may carry a few hundred exclusion
// rules; nothing legitimate comes close.
const (
	// MaxLen bounds a snippet's bytes.
	MaxLen = 64 << 10
	// MaxDirectives bounds a snippet's directives.
	MaxDirectives = 500
	// maxArgs bounds one directive's arguments.
	maxArgs = 64
)

// line is one directive as written: its words, and the line it starts on.
type line struct {
	words []string
	n     int
}

// tokenize splits src into directives: a directive ends at a newline not
// preceded by a backslash (ModSecurity's continuation), "#" starts a
// comment where a directive would start, and words are separated by
// spaces and tabs. A word in double quotes may hold spaces; \" in it is a
// quote (which no grammar accepts) and any other backslash stays. It
// refuses control characters but tab and newline, invalid UTF-8, a quote
// inside an unquoted word and an unterminated quote.
func tokenize(src string) ([]line, error) {
	if len(src) > MaxLen {
		return nil, fmt.Errorf("snippet of %d bytes is longer than %d", len(src), MaxLen)
	}
	if !utf8.ValidString(src) {
		return nil, fmt.Errorf("snippet is not valid UTF-8")
	}
	var out []line
	var cur line
	n := 1
	end := func() {
		if len(cur.words) > 0 {
			out = append(out, cur)
		}
		cur = line{}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			end()
			n++
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			n++
			i += 2
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			n++
			i += 3
		case c == ' ' || c == '\t':
			i++
		case c == '#' && len(cur.words) == 0:
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c < ' ' || c == 0x7f:
			return nil, fmt.Errorf("line %d: control character %q", n, c)
		case c == '"':
			w, next, err := quoted(src, i, &n)
			if err != nil {
				return nil, err
			}
			cur.add(w, n)
			i = next
		default:
			j := i
			for j < len(src) && src[j] != ' ' && src[j] != '\t' && src[j] != '\n' && !(src[j] == '\\' && j+1 < len(src) && (src[j+1] == '\n' || src[j+1] == '\r')) {
				if src[j] == '"' {
					return nil, fmt.Errorf("line %d: a quote inside the word %q", n, model.Truncate(src[i:j]))
				}
				if src[j] < ' ' || src[j] == 0x7f {
					return nil, fmt.Errorf("line %d: control character %q", n, src[j])
				}
				j++
			}
			cur.add(src[i:j], n)
			i = j
		}
		if len(cur.words) > maxArgs+1 {
			return nil, fmt.Errorf("line %d: directive with more than %d arguments", cur.n, maxArgs)
		}
	}
	end()
	return out, nil
}

func (l *line) add(w string, n int) {
	if len(l.words) == 0 {
		l.n = n
	}
	l.words = append(l.words, w)
}

// quoted reads the double-quoted word starting at src[i]; it returns the
// word and the index after its closing quote. A backslash-newline inside
// continues the line, as outside.
func quoted(src string, i int, n *int) (string, int, error) {
	var b strings.Builder
	start := *n
	for j := i + 1; j < len(src); j++ {
		c := src[j]
		switch {
		case c == '"':
			if j+1 < len(src) && !strings.ContainsRune(" \t\n\\", rune(src[j+1])) {
				return "", 0, fmt.Errorf("line %d: a quoted word is followed by %q", *n, src[j+1])
			}
			return b.String(), j + 1, nil
		case c == '\\' && j+1 < len(src) && src[j+1] == '"':
			b.WriteByte('"')
			j++
		case c == '\\' && j+1 < len(src) && src[j+1] == '\n':
			*n++
			j++
		case c == '\\' && j+2 < len(src) && src[j+1] == '\r' && src[j+2] == '\n':
			*n++
			j += 2
		case c == '\n':
			return "", 0, fmt.Errorf("line %d: a quoted word runs past the end of the line", *n)
		case c < ' ' && c != '\t' || c == 0x7f:
			return "", 0, fmt.Errorf("line %d: control character %q", *n, c)
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("line %d: the quote is not closed", start)
}
