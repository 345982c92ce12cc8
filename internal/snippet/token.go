// Package snippet reads nginx configuration snippets into the model's
// typed values: a tokenizer for nginx's configuration syntax and an
// allowlist of directives per context, each with a grammar for its
// arguments. Whatever it cannot classify it refuses, naming the directive,
// so a snippet can only ask for what model.Snippet can express.
package snippet

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on a snippet: nothing legitimate comes close.
const (
	// MaxLen bounds a snippet's bytes.
	MaxLen = 16 << 10
	// MaxTokenLen bounds one word, well under nginx's 4 KiB.
	MaxTokenLen = 2048
	// MaxDirectives bounds a snippet's directives.
	MaxDirectives = 100
)

// TokenKind says what a token is.
type TokenKind int

// The token kinds.
const (
	Word TokenKind = iota
	Semicolon
	OpenBrace
	CloseBrace
)

func (k TokenKind) String() string {
	switch k {
	case Semicolon:
		return `";"`
	case OpenBrace:
		return `"{"`
	case CloseBrace:
		return `"}"`
	}
	return "word"
}

// Token is one token of nginx's configuration syntax. Text is a word's
// value as nginx reads it: quotes removed and the escapes \" \' \\
// resolved; any other backslash stays, as in nginx.
type Token struct {
	Kind   TokenKind
	Text   string
	Quoted bool
	Line   int
}

// Tokenize splits src as nginx's configuration reader would (with an
// error, the tokens before it), and refuses
// what it cannot classify: NUL, CR and other control characters but tab
// and newline, invalid UTF-8, non-ASCII outside quotes, a quote or "#"
// inside an unquoted word, a quoted word not followed by a space or ";",
// an unterminated quote, the escapes \t \r \n (control characters), and a
// backslash before a space, "$", ";", "{", "}" or "#".
func Tokenize(src string) ([]Token, error) {
	if len(src) > MaxLen {
		return nil, fmt.Errorf("snippet of %d bytes is longer than %d", len(src), MaxLen)
	}
	if !utf8.ValidString(src) {
		return nil, fmt.Errorf("snippet is not valid UTF-8")
	}
	var out []Token
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				if err := checkControl(src[i], line); err != nil {
					return out, err
				}
				i++
			}
		case c == ';':
			out = append(out, Token{Kind: Semicolon, Line: line})
			i++
		case c == '{':
			out = append(out, Token{Kind: OpenBrace, Line: line})
			i++
		case c == '}':
			out = append(out, Token{Kind: CloseBrace, Line: line})
			i++
		case c == '"' || c == '\'':
			t, n, err := quoted(src[i:], line)
			if err != nil {
				return out, err
			}
			i += n
			// ")" may end an if condition, as in nginx.
			if i < len(src) && !strings.ContainsRune(" \t\n;)", rune(src[i])) {
				return out, fmt.Errorf("line %d: a quoted word must be followed by a space, \";\" or \")\", not %q", line, src[i])
			}
			out = append(out, t)
		default:
			t, n, err := unquoted(src[i:], line)
			if err != nil {
				return out, err
			}
			i += n
			out = append(out, t)
		}
		if len(out) > MaxDirectives*16 {
			return nil, fmt.Errorf("snippet has more than %d tokens", MaxDirectives*16)
		}
	}
	return out, nil
}

func checkControl(c byte, line int) error {
	if c < ' ' && c != '\t' && c != '\n' || c == 0x7f {
		return fmt.Errorf("line %d: control character %#02x", line, c)
	}
	return nil
}

// quoted reads a single- or double-quoted word; it returns the token and
// the bytes read.
func quoted(s string, line int) (Token, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		switch {
		case c == q:
			return word(b.String(), true, line)(i + 1)
		case c == '\\':
			if err := escape(&b, s, i, line); err != nil {
				return Token{}, 0, err
			}
			i += 2
		case c == '\n':
			return Token{}, 0, fmt.Errorf("line %d: newline inside a quoted word", line)
		default:
			if err := checkControl(c, line); err != nil {
				return Token{}, 0, err
			}
			b.WriteByte(c)
			i++
		}
	}
	return Token{}, 0, fmt.Errorf("line %d: unterminated quote", line)
}

// unquoted reads a word up to a space, newline, ";", "{" or "}".
func unquoted(s string, line int) (Token, int, error) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		if strings.IndexByte(" \t\n;{", c) >= 0 {
			break
		}
		switch {
		case c == '}':
			// nginx keeps it in the word; refused as too easily misread.
			return Token{}, 0, fmt.Errorf("line %d: '}' inside a word", line)
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			// ${name}: nginx keeps the brace in the word.
			end := strings.IndexByte(s[i:], '}')
			if end < 0 || !nameChars(s[i+2:i+end]) {
				return Token{}, 0, fmt.Errorf("line %d: unterminated ${ or one holding more than a variable name", line)
			}
			b.WriteString(s[i : i+end+1])
			i += end + 1
			continue
		case c == '\\':
			if err := escape(&b, s, i, line); err != nil {
				return Token{}, 0, err
			}
			i += 2
			continue
		case c == '"' || c == '\'' || c == '#':
			return Token{}, 0, fmt.Errorf("line %d: %q inside a word", line, c)
		case c >= 0x80:
			return Token{}, 0, fmt.Errorf("line %d: non-ASCII character outside quotes", line)
		}
		if err := checkControl(c, line); err != nil {
			return Token{}, 0, err
		}
		b.WriteByte(c)
		i++
	}
	return word(b.String(), false, line)(i)
}

func word(text string, quoted bool, line int) func(int) (Token, int, error) {
	return func(n int) (Token, int, error) {
		if len(text) > MaxTokenLen {
			return Token{}, 0, fmt.Errorf("line %d: word of %d bytes is longer than %d", line, len(text), MaxTokenLen)
		}
		return Token{Kind: Word, Text: text, Quoted: quoted, Line: line}, n, nil
	}
}

// escape resolves the backslash at s[i] as nginx does: \" \' \\ stand for
// the character; before a letter, digit or regex punctuation the
// backslash stays (regexes need \. and \d). \t, \r and \n are refused
// (control characters), as is a backslash before anything that would
// change how the line is split or expanded.
func escape(b *strings.Builder, s string, i, line int) error {
	if i+1 >= len(s) {
		return fmt.Errorf("line %d: backslash at the end", line)
	}
	c := s[i+1]
	switch {
	case c == '"' || c == '\'' || c == '\\':
		b.WriteByte(c)
		return nil
	case c == 't' || c == 'r' || c == 'n':
		return fmt.Errorf(`line %d: escape \%c stands for a control character`, line, c)
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".*+?()[]^|/-:,=@&!~%<>", c) >= 0:
		b.WriteString(s[i : i+2])
		return nil
	}
	return fmt.Errorf("line %d: backslash before %q", line, c)
}

// nameChars reports whether s holds only ASCII letters, digits and "_".
func nameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
