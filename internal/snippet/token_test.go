package snippet

import (
	"reflect"
	"strings"
	"testing"
)

// TestTokenize: a row per rule of nginx's configuration syntax as the
// tokenizer reads it, and per thing it refuses.
func TestTokenize(t *testing.T) {
	w := func(s string) Token { return Token{Kind: Word, Text: s} }
	q := func(s string) Token { return Token{Kind: Word, Text: s, Quoted: true} }
	semi, open, cls := Token{Kind: Semicolon}, Token{Kind: OpenBrace}, Token{Kind: CloseBrace}
	for _, tc := range []struct {
		name, src string
		want      []Token
		err       string
	}{
		{"words and a semicolon", "add_header X 1;", []Token{w("add_header"), w("X"), w("1"), semi}, ""},
		{"spaces, tabs and newlines separate", "a\tb \n c;", []Token{w("a"), w("b"), w("c"), semi}, ""},
		{"semicolon ends a word", "a b;c;", []Token{w("a"), w("b"), semi, w("c"), semi}, ""},
		{"braces are tokens", "if ($x) { return 1; }", []Token{w("if"), w("($x)"), open, w("return"), w("1"), semi, cls}, ""},
		{"double quotes", `a "b c;{}#";`, []Token{w("a"), q("b c;{}#"), semi}, ""},
		{"single quotes", `a 'b "c"';`, []Token{w("a"), q(`b "c"`), semi}, ""},
		{"escaped quote inside quotes", `a "b\"c";`, []Token{w("a"), q(`b"c`), semi}, ""},
		{"escaped backslash", `a "b\\c";`, []Token{w("a"), q(`b\c`), semi}, ""},
		{"regex escape kept", `rewrite ^/a\.html$ /b;`, []Token{w("rewrite"), w(`^/a\.html$`), w("/b"), semi}, ""},
		{"empty quotes", `a "";`, []Token{w("a"), q(""), semi}, ""},
		{"comment to end of line", "a b; # c; d {\ne;", []Token{w("a"), w("b"), semi, w("e"), semi}, ""},
		{"comment hides a semicolon", "a b # ;\n;", []Token{w("a"), w("b"), semi}, ""},
		{"variables are word text", "a $host${uri};", []Token{w("a"), w("$host${uri}"), semi}, ""},
		{"UTF-8 inside quotes", `a "é";`, []Token{w("a"), q("é"), semi}, ""},
		{"NUL", "a\x00b;", nil, "control character"},
		{"CR", "a b;\r\n", nil, "control character"},
		{"CR in a comment", "# a\rb\n", nil, "control character"},
		{"CR in quotes", "a \"b\rc\";", nil, "control character"},
		{"escape for a newline", `a "b\nc";`, nil, `escape \n`},
		{"escape for CR", `a "b\rc";`, nil, `escape \r`},
		{"newline inside quotes", "a \"b\nc\";", nil, "newline inside a quoted word"},
		{"unterminated quote", `a "b;`, nil, "unterminated quote"},
		{"quote inside a word", `a b"c";`, nil, `'"' inside a word`},
		{"hash inside a word", `a b#c;`, nil, `'#' inside a word`},
		{"word glued to a closing quote", `a "b"c;`, nil, "must be followed by a space"},
		{"backslash before $", `a \$host;`, nil, "backslash before '$'"},
		{"backslash before ;", `a b\;c;`, nil, "backslash before ';'"},
		{"backslash at the end", `a b\`, nil, "backslash at the end"},
		{"non-ASCII outside quotes", "a é;", nil, "non-ASCII"},
		{"invalid UTF-8", "a \"\xff\";", nil, "not valid UTF-8"},
		{"too long", strings.Repeat("a", MaxLen+1), nil, "longer than"},
		{"word too long", "a " + strings.Repeat("b", MaxTokenLen+1) + ";", nil, "longer than"},
		{"too many tokens", strings.Repeat("a ", MaxDirectives*16+1), nil, "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Tokenize(tc.src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Tokenize(%q) = %v, %v; want an error containing %q", tc.src, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Tokenize(%q): %v", tc.src, err)
			}
			for i := range got {
				got[i].Line = 0
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Tokenize(%q) =\n %+v\nwant\n %+v", tc.src, got, tc.want)
			}
		})
	}
}
