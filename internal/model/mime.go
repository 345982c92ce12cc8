package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Bounds on a MIME type list.
const (
	maxMIMETypes = 100
	// maxMIMETypeLen is the longest type nginx can hash: gzip_types and
	// brotli_types build a hash with a fixed bucket size of 64 bytes,
	// and nginx refuses the configuration if one type does not fit (8
	// bytes of value, the type and 2 rounded up to 8, and a NULL).
	maxMIMETypeLen = 46
)

// mimeNameChars are RFC 6838's restricted-name characters: letters,
// digits and ! # $ & - ^ _ . +, less "#" (a comment in nginx.conf) and
// "$" (a variable).
var mimeNameChars = newCharSet("!&-^_.+")

// ParseMIMETypes parses gzip-types and brotli-types: MIME types
// separated by spaces, tabs or commas, each type/subtype of at most 46
// bytes (nginx's limit) where both names are RFC 6838 restricted names
// (letters, digits and ! & - ^ _ . +, starting with a letter or digit;
// "#" and "$" are refused), or exactly "*" for every type, which must
// stand alone.
// Parameters ("; charset=...") and wildcards such as "text/*" are refused:
// nginx matches types exactly. At most 100 types as written; names are
// lower-cased (MIME types are case-insensitive) and duplicates dropped,
// keeping the order.
func ParseMIMETypes(s string) ([]string, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
	if len(fields) == 0 {
		return nil, errors.New("want a list of MIME types such as application/json text/css")
	}
	if len(fields) > maxMIMETypes {
		return nil, fmt.Errorf("want at most %d MIME types, not %d", maxMIMETypes, len(fields))
	}
	var out []string
	for _, f := range fields {
		if f == "*" {
			if len(fields) > 1 {
				return nil, errors.New("MIME type * stands for every type and must stand alone")
			}
			return []string{"*"}, nil
		}
		t, err := parseMIMEType(f)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// parseMIMEType checks one type/subtype and returns it in lower case.
func parseMIMEType(s string) (string, error) {
	typ, sub, ok := strings.Cut(s, "/")
	if !ok || typ == "" || sub == "" {
		return "", fmt.Errorf("MIME type %q must be type/subtype, such as application/json", Truncate(s))
	}
	if len(s) > maxMIMETypeLen {
		return "", fmt.Errorf("MIME type %q is longer than %d bytes, which nginx cannot hash", Truncate(s), maxMIMETypeLen)
	}
	for _, name := range []string{typ, sub} {
		if c := name[0]; !mimeNameChars[c] || !isAlnum(c) {
			return "", fmt.Errorf("MIME type %q: a name must start with a letter or digit, not %s", Truncate(s), describeByte(c))
		}
		for i := 0; i < len(name); i++ {
			if !mimeNameChars[name[i]] {
				return "", fmt.Errorf("MIME type %q must hold only letters, digits and !&-^_.+, not %s", Truncate(s), describeByte(name[i]))
			}
		}
	}
	return strings.ToLower(s), nil
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
