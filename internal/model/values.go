package model

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// This file holds the parsers that turn untrusted annotation and custom
// resource strings into typed values. Whatever they accept may be printed
// into nginx.conf, so each grammar is an allow-list of bytes with a length
// bound, documented on the function. None of them trims, unescapes or
// otherwise repairs its input: a value is accepted as written or refused.
// Error messages say what is wanted; they quote hostile input only through
// truncate.

// charSet is a set of ASCII bytes.
type charSet [256]bool

// newCharSet returns the set of ASCII letters and digits plus extra.
func newCharSet(extra string) *charSet {
	var s charSet
	for c := 'a'; c <= 'z'; c++ {
		s[c], s[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		s[c] = true
	}
	for i := 0; i < len(extra); i++ {
		s[extra[i]] = true
	}
	return &s
}

// describeByte names a byte for an error message without echoing control
// or non-ASCII bytes.
func describeByte(c byte) string {
	switch {
	case c == ' ':
		return "a space"
	case c == '\t':
		return "a tab"
	case c > ' ' && c < 0x7f:
		return fmt.Sprintf("%q", rune(c))
	case c >= 0x80:
		return fmt.Sprintf("the non-ASCII byte 0x%02x", c)
	default:
		return fmt.Sprintf("the control byte 0x%02x", c)
	}
}

// splitList splits a comma-separated list, trimming spaces and tabs around
// each item. An empty item, including the whole of an empty s, is an error.
func splitList(s, what string) ([]string, error) {
	items := strings.Split(s, ",")
	for i, it := range items {
		items[i] = strings.Trim(it, " \t")
		if items[i] == "" {
			return nil, fmt.Errorf("want a comma-separated list of %s with no empty items", what)
		}
	}
	return items, nil
}

// --- Sizes ---------------------------------------------------------------

// sizeSyntax is nginx's size syntax as ParseSize accepts it.
var sizeSyntax = regexp.MustCompile(`^([0-9]{1,9})([kKmMgG]?)$`)

// ParseSize parses a byte count in nginx's size syntax: 1 to 9 decimal
// digits followed by an optional unit k or K (KiB), m or M (MiB), g or G
// (GiB). "0" is allowed. Signs, spaces, decimal points and other units are
// refused. The result is at most 999999999 GiB, which fits an int64.
func ParseSize(s string) (int64, error) {
	m := sizeSyntax.FindStringSubmatch(s)
	if m == nil {
		return 0, errors.New("want a size such as 1m, 512k or 0")
	}
	n, _ := strconv.ParseInt(m[1], 10, 64) // at most 9 digits
	switch m[2] {
	case "k", "K":
		n <<= 10
	case "m", "M":
		n <<= 20
	case "g", "G":
		n <<= 30
	}
	return n, nil
}

// FormatSize prints a byte count in nginx's size syntax with the largest
// unit that divides it exactly: 1048576 is "1m", 524288 is "512k", 1536 is
// "1536" and 0 is "0". ParseSize(FormatSize(n)) is n for every n that
// ParseSize returns. n should not be negative; nginx refuses what a
// negative n prints.
func FormatSize(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "g"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "m"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// --- Durations -----------------------------------------------------------

// maxSeconds bounds every duration ParseSeconds accepts.
const maxSeconds = 24 * time.Hour

// secondsSyntax is a bare number of seconds or a number with one of
// nginx's units ms, s, m or h. Units are lower case only: nginx reads "M"
// as months.
var secondsSyntax = regexp.MustCompile(`^([0-9]{1,9})(ms|s|m|h)?$`)

// ParseSeconds parses a duration between 0 and 24h: either a bare number
// of seconds as ingress-nginx's timeout annotations use ("60"), or 1 to 9
// digits with one nginx unit suffix, ms, s, m or h ("500ms", "5s", "2m").
// Units are lower case only (nginx reads "M" as months); signs, spaces,
// decimal points and compound values such as "1m30s" are refused.
func ParseSeconds(s string) (time.Duration, error) {
	m := secondsSyntax.FindStringSubmatch(s)
	if m == nil {
		return 0, errors.New("want a duration such as 60, 5s or 500ms")
	}
	unit := time.Second
	switch m[2] {
	case "ms":
		unit = time.Millisecond
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	}
	n, _ := strconv.ParseInt(m[1], 10, 64) // at most 9 digits
	if n > int64(maxSeconds/unit) {        // checked before multiplying: no overflow
		return 0, errors.New("want a duration of at most 24h")
	}
	return time.Duration(n) * unit, nil
}

// ParseTimeout is ParseSeconds for timeouts, which must be more than 0.
func ParseTimeout(s string) (time.Duration, error) {
	d, err := ParseSeconds(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, errors.New("want a timeout of more than 0, such as 60 or 5s")
	}
	return d, nil
}

// FormatDuration prints a duration in nginx's time syntax: whole seconds
// as "60s", anything else as whole milliseconds ("500ms", "1500ms"); a
// part below a millisecond is dropped. ParseSeconds(FormatDuration(d)) is
// d for every d that ParseSeconds returns. d should not be negative; nginx
// refuses what a negative d prints.
func FormatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}

// --- Headers -------------------------------------------------------------

// maxHeaderNameLen bounds a header name.
const maxHeaderNameLen = 128

// headerNameChars are the bytes ParseHeaderName accepts.
var headerNameChars = newCharSet("-_.")

// ParseHeaderName checks an HTTP header name: 1 to 128 ASCII letters,
// digits, "-", "_" and ".". This is deliberately narrower than an RFC 9110
// token, which also allows ! # $ % & ' * + ^ ` | ~: names are printed into
// nginx.conf, where "$" starts a variable and quotes and "#" have meaning,
// and real header names never use them. The name is returned as written;
// header names are case-insensitive, so callers compare them with
// strings.EqualFold.
func ParseHeaderName(s string) (string, error) {
	if s == "" || len(s) > maxHeaderNameLen {
		return "", fmt.Errorf("want a header name of 1 to %d letters, digits, - _ or .", maxHeaderNameLen)
	}
	for i := 0; i < len(s); i++ {
		if !headerNameChars[s[i]] {
			return "", fmt.Errorf("header name %q must hold only letters, digits, - _ and ., not %s", Truncate(s), describeByte(s[i]))
		}
	}
	return s, nil
}

// maxHeaderValueLen bounds a header value.
const maxHeaderValueLen = 1024

// ParseHeaderValue checks a header value that will be printed inside
// double quotes in nginx.conf: 0 to 1024 bytes of visible ASCII (0x21 to
// 0x7E), spaces and tabs, not starting or ending with a space or tab.
// These are refused even though they are visible: "$", which nginx would
// expand as a variable, and the bytes that would need escaping or that
// end a block if a quoting helper ever failed: '"', '\', '{' and '}'.
// ';' is allowed: real values need it ("max-age=300; includeSubDomains",
// "text/html; charset=utf-8"), and inside double quotes it is inert.
func ParseHeaderValue(s string) (HeaderValue, error) {
	if len(s) > maxHeaderValueLen {
		return "", fmt.Errorf("want a header value of at most %d bytes, not %d", maxHeaderValueLen, len(s))
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '$':
			return "", errors.New(`header value must not contain '$': nginx would expand it as a variable`)
		case c == '"' || c == '\\' || c == '{' || c == '}':
			return "", fmt.Errorf("header value must not contain %s", describeByte(c))
		case c == ' ' || c == '\t' || (c > ' ' && c < 0x7f):
		default:
			return "", fmt.Errorf("header value must hold only visible ASCII, spaces and tabs, not %s", describeByte(c))
		}
	}
	if s != "" && (isBlank(s[0]) || isBlank(s[len(s)-1])) {
		return "", errors.New("header value must not start or end with a space or tab")
	}
	return HeaderValue(s), nil
}

// isBlank reports whether c is a space or a tab.
func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// --- Path regular expressions --------------------------------------------

// Bounds on a path regular expression.
const (
	maxRegexLen     = 256
	maxRegexRepeat  = 100 // largest count in {n,m}; RE2 itself allows 1000
	maxRegexNesting = 3   // quantifiers nested in quantifiers
	maxRegexGroups  = 9   // $1 to $9 are all a rewrite target can name
)

// regexChars are the bytes a path regular expression may hold.
var regexChars = newCharSet(`/._~-!*()+,=:@&?|[]^$\{}`)

// regexEscapes are the bytes that may follow a backslash: the class
// escapes \d \w \s \D \W \S and escaped punctuation. "\\" is refused
// because nginx's own parser turns it into a single backslash inside a
// quoted string, and "\{" and "\}" because braces are only repeat counts.
const regexEscapes = `.-/dwsDWS+*?()[]|^$`

// classEscapes are the escapes that stand for a set of characters.
const classEscapes = `dwsDWS`

// ParseRegex checks a path regular expression for an nginx
// `location ~* "^..."` (PCRE) that Go's regexp package (RE2) compiles with
// the same meaning. The value is the Ingress path as written; callers
// prefix "^" and match case-insensitively. It is returned unchanged.
//
// The grammar:
//   - 1 to 256 bytes, starting with "/";
//   - ASCII letters, digits and / . _ ~ - ! * ( ) + , = : @ & ? | [ ] ^ $ \ { }
//     only: no whitespace, quotes, ";", "#" or "%";
//   - a backslash escapes only . - / + * ? ( ) [ ] | ^ $ or is one of the
//     class escapes \d \w \s \D \W \S;
//   - no "(?" at all: no non-capturing or named groups, flags or lookaround;
//   - braces only as a repeat count {n}, {n,} or {n,m} with counts of at
//     most 100 and no leading zeros (Go and PCRE disagree on "{,n}" and
//     "{01}");
//   - inside a character class, "[" only as a POSIX class such as
//     [:alpha:], and "-" only first, last or between two single characters
//     (not after a range); no class that PCRE reads as a misplaced POSIX
//     class, such as "[:alpha:]" without the outer brackets;
//   - no "|" outside parentheses, since the prefixed "^" would anchor only
//     the first alternative: write /(a|b) instead of /a|/b;
//   - no quantifier directly after ^ or $ (PCRE refuses "$*");
//   - quantifiers nested at most 3 deep and at most 9 capture groups;
//   - whatever else Go's regexp/syntax refuses (backreferences,
//     possessive and nested repetition, unbalanced parentheses).
//
// Differences remain only on bytes a normalized path rarely holds: PCRE's
// "$" also matches before a final newline, \s also matches a vertical
// tab, and Go folds case over Unicode (the Kelvin sign matches "k") where
// nginx's PCRE folds ASCII only. The nesting bound does not stop PCRE
// from backtracking on "/(a+)+$"; nginx's PCRE match limit bounds that.
// The result contains "{", "}" and "|", so it must be printed inside
// double quotes.
func ParseRegex(s string) (string, error) {
	return regexChecks.get(s)
}

// regexChecks remembers ParseRegex's answers: Ingresses of one layout
// share their paths, and at 10,000 Ingresses compiling each again was a
// tenth of a sync. It is bounded (emptied when full) and safe for
// concurrent use; ParseRegex is a pure function, so an answer never goes
// stale.
var regexChecks = &memo{max: 4096, fn: parseRegex}

type memo struct {
	mu  sync.Mutex
	max int
	fn  func(string) (string, error)
	m   map[string]memoResult
}

type memoResult struct {
	out string
	err error
}

func (c *memo) get(s string) (string, error) {
	c.mu.Lock()
	r, ok := c.m[s]
	c.mu.Unlock()
	if ok {
		return r.out, r.err
	}
	out, err := c.fn(s)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]memoResult)
	}
	c.m[s] = memoResult{out, err}
	c.mu.Unlock()
	return out, err
}

func parseRegex(s string) (string, error) {
	if s == "" || len(s) > maxRegexLen || s[0] != '/' {
		return "", fmt.Errorf("want a path regex of 1 to %d bytes that starts with /", maxRegexLen)
	}
	for i := 0; i < len(s); i++ {
		if !regexChars[s[i]] {
			return "", fmt.Errorf("path regex must not contain %s", describeByte(s[i]))
		}
	}
	if err := scanRegex(s); err != nil {
		return "", err
	}
	if err := checkRegexTree(s); err != nil {
		return "", err
	}
	return s, nil
}

// checkRegexTree checks the rules of ParseRegex that need the parsed
// expression: syntax, groups, quantifiers.
func checkRegexTree(s string) error {
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		var serr *syntax.Error
		if errors.As(err, &serr) {
			return fmt.Errorf("path regex is invalid: %s", serr.Code)
		}
		return errors.New("path regex is invalid")
	}
	if n := re.MaxCap(); n > maxRegexGroups {
		return fmt.Errorf("path regex has %d capture groups, more than %d", n, maxRegexGroups)
	}
	if quantifiedAssertion(re) {
		return errors.New("path regex must not put a quantifier after ^ or $")
	}
	if d := quantifierDepth(re); d > maxRegexNesting {
		return fmt.Errorf("path regex nests quantifiers %d deep, more than %d", d, maxRegexNesting)
	}
	if _, err := regexp.Compile(s); err != nil {
		return errors.New("path regex is invalid")
	}
	return nil
}

// ParseHeaderRegex checks a regular expression searched for in a request
// header (block-user-agents, block-referers) with nginx's map: the grammar
// of ParseRegex, so that PCRE and Go's RE2 agree on its meaning, except
// that it need not start with "/", may hold spaces, may use "|" at the top
// level (it is not anchored), and may not hold "$" at all (nginx would
// expand it inside a quoted map key; \z is not allowed either, so the
// end of the header cannot be anchored). It is returned unchanged.
func ParseHeaderRegex(s string) (string, error) {
	if s == "" || len(s) > maxRegexLen {
		return "", fmt.Errorf("want a regex of 1 to %d bytes", maxRegexLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '$' || (c != ' ' && !regexChars[c]) {
			return "", fmt.Errorf("regex must not contain %s", describeByte(c))
		}
	}
	// Wrapped in a group, a top-level "|" passes the path grammar's check;
	// checkRegexTree then parses s alone, so an unbalanced ")" is still
	// refused.
	err := scanRegex("(" + s + ")")
	if err == nil {
		err = checkRegexTree(s)
	}
	if err != nil {
		return "", errors.New(strings.Replace(err.Error(), "path regex", "regex", 1))
	}
	return s, nil
}

// RegexGroups returns the number of capture groups of a regular
// expression that ParseRegex accepted, or 0 if s does not parse.
func RegexGroups(s string) int {
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		return 0
	}
	return re.MaxCap()
}

// quantifierDepth returns the largest number of quantifiers on one path
// from the root of re to a leaf.
func quantifierDepth(re *syntax.Regexp) int {
	d := 0
	for _, sub := range re.Sub {
		d = max(d, quantifierDepth(sub))
	}
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		d++
	}
	return d
}

// quantifiedAssertion reports whether re applies a quantifier directly to
// ^ or $, which Go accepts and PCRE refuses.
func quantifiedAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		switch re.Sub[0].Op {
		case syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
			return true
		}
	}
	return slices.ContainsFunc(re.Sub, quantifiedAssertion)
}

// scanRegex checks the lexical rules of ParseRegex that regexp/syntax does
// not: allowed escapes, "(?", braces, character class items and top-level
// alternation. s holds only regexChars.
func scanRegex(s string) error {
	depth := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			if err := checkRegexEscape(s, i); err != nil {
				return err
			}
			i += 2
		case '[':
			end, err := scanRegexClass(s, i)
			if err != nil {
				return err
			}
			i = end
		case '{':
			end, err := scanRegexRepeat(s, i)
			if err != nil {
				return err
			}
			i = end
		case '}':
			return errors.New("path regex may use braces only for a repeat count such as {2,5}")
		case '(':
			if i+1 < len(s) && s[i+1] == '?' {
				return errors.New("path regex must not use (?: groups, named groups, flags or lookaround")
			}
			depth++
			i++
		case ')':
			depth-- // regexp/syntax reports unbalanced parentheses
			i++
		case '|':
			if depth == 0 {
				return errors.New("path regex must not use | outside parentheses; write /(a|b) rather than /a|/b")
			}
			i++
		default:
			i++
		}
	}
	return nil
}

// checkRegexEscape checks the backslash escape at s[i].
func checkRegexEscape(s string, i int) error {
	if i+1 == len(s) {
		return errors.New("path regex must not end with a backslash")
	}
	if !strings.ContainsRune(regexEscapes, rune(s[i+1])) {
		return fmt.Errorf(`path regex must not use the escape \%c; allowed are \d \w \s \D \W \S and \ before one of %s`, s[i+1], `. - / + * ? ( ) [ ] | ^ $`)
	}
	return nil
}

// scanRegexRepeat checks the repeat count starting with "{" at s[i] and
// returns the index after its "}".
func scanRegexRepeat(s string, i int) (int, error) {
	bad := fmt.Errorf("path regex may use braces only for a repeat count such as {2,5} with counts of at most %d", maxRegexRepeat)
	end := strings.IndexByte(s[i:], '}')
	if end < 0 {
		return 0, bad
	}
	body := s[i+1 : i+end]
	lo, hi, comma := strings.Cut(body, ",")
	if !repeatCount(lo) || (comma && hi != "" && !repeatCount(hi)) {
		return 0, bad
	}
	return i + end + 1, nil
}

// repeatCount reports whether s is a decimal repeat count up to
// maxRegexRepeat without leading zeros.
func repeatCount(s string) bool {
	if s == "" || len(s) > 3 || (len(s) > 1 && s[0] == '0') || strings.Trim(s, "0123456789") != "" {
		return false
	}
	n, _ := strconv.Atoi(s) // at most 3 digits
	return n <= maxRegexRepeat
}

// Kinds of character class items.
const (
	classChar = iota // one character: may end a range
	classSet         // \d, [:alpha:] and the like: may not
)

// scanRegexClass checks the character class starting with "[" at s[i] and
// returns the index after its closing "]".
func scanRegexClass(s string, i int) (int, error) {
	j := i + 1
	if pcrePOSIXStart(s[j:]) {
		return 0, errors.New("path regex may use a POSIX class such as [:alpha:] only inside brackets, as in [[:alpha:]]")
	}
	if j < len(s) && s[j] == '^' {
		j++
	}
	first := true // a "]" first in the class is a literal in Go and PCRE
	for {
		if j >= len(s) {
			return 0, errors.New("path regex has a [ without a closing ]")
		}
		if s[j] == ']' && !first {
			return j + 1, nil
		}
		first = false
		kind, next, err := scanClassItem(s, j)
		if err != nil {
			return 0, err
		}
		j = next
		if j+1 < len(s) && s[j] == '-' && s[j+1] != ']' {
			kind2, next, err := scanClassItem(s, j+1)
			if err != nil {
				return 0, err
			}
			j = next
			// "[a-z-0]" is a literal "-" in Go; refuse rather than rely
			// on PCRE agreeing.
			if kind != classChar || kind2 != classChar || (j+1 < len(s) && s[j] == '-' && s[j+1] != ']') {
				return 0, errBadClassHyphen
			}
		}
	}
}

// pcrePOSIXStart reports whether PCRE reads a character class whose body
// starts with rest as a misplaced POSIX class ("[:alpha:]", "[.a.]",
// "[=a=]") and refuses it, where Go reads a set of characters. It follows
// check_posix_syntax in pcre2_compile.c.
func pcrePOSIXStart(rest string) bool {
	if rest == "" || strings.IndexByte(":.=", rest[0]) < 0 {
		return false
	}
	term := rest[0]
	for k := 1; len(rest)-k >= 2; k++ {
		switch {
		case rest[k] == '\\' && (rest[k+1] == ']' || rest[k+1] == '\\'):
			k++
		case (rest[k] == '[' && rest[k+1] == term) || rest[k] == ']':
			return false
		case rest[k] == term && rest[k+1] == ']':
			return true
		}
	}
	return false
}

// errBadClassHyphen refuses a "-" that PCRE might read differently.
var errBadClassHyphen = errors.New("path regex must put - in a character class first, last or between two single characters")

// posixClass is a POSIX class name inside a character class.
var posixClass = regexp.MustCompile(`^\[:\^?[a-z]{1,10}:\]`)

// scanClassItem checks the character class item at s[j] and returns its
// kind and the index after it.
func scanClassItem(s string, j int) (kind, next int, err error) {
	switch s[j] {
	case '\\':
		if err := checkRegexEscape(s, j); err != nil {
			return 0, 0, err
		}
		if strings.IndexByte(classEscapes, s[j+1]) >= 0 {
			return classSet, j + 2, nil
		}
		return classChar, j + 2, nil
	case '[':
		if m := posixClass.FindString(s[j:]); m != "" {
			return classSet, j + len(m), nil
		}
		return 0, 0, errors.New(`path regex may use [ inside a character class only for a POSIX class such as [:alpha:]; write \[ instead`)
	case '{', '}':
		return 0, 0, errors.New("path regex may use braces only for a repeat count such as {2,5}")
	}
	return classChar, j + 1, nil
}

// --- Rewrite targets -----------------------------------------------------

// maxRewriteLen bounds a rewrite target.
const maxRewriteLen = 1024

// rewriteChars are the bytes of a rewrite target besides "$", which starts
// a capture reference, and "?", which starts the query: those of pathChars.
var rewriteChars = newCharSet("._~!*()+,=:@&/-")

// ParseRewriteTarget checks an ingress-nginx rewrite-target for a path
// whose regex has groups capture groups. It is returned unchanged.
//
// The grammar: 1 to 1024 bytes; a path that starts with "/" (not "//"),
// optionally followed by "?" and a query. Path and query hold ASCII
// letters, digits and . _ ~ ! * ( ) + , = : @ & / - and capture references
// $1 to $9. A reference is "$" and exactly one digit, as nginx reads it,
// so "$12" is $1 followed by "2"; it may not name a group beyond groups.
// The path may not contain "//" or "." or ".." segments. A trailing "?"
// with an empty query is allowed: it tells nginx not to append the
// request's own arguments. URLs are refused: this is a path rewrite, not a
// redirect. Quotes, whitespace, "%", "#", "\", ";", braces and any other
// "$" are refused.
func ParseRewriteTarget(s string, groups int) (string, error) {
	switch {
	case s == "" || len(s) > maxRewriteLen:
		return "", fmt.Errorf("want a rewrite target of 1 to %d bytes, a path such as /api/$1", maxRewriteLen)
	case s[0] != '/' && strings.Contains(s, "://"):
		return "", errors.New("rewrite target must be a path such as /api/$1, not a URL")
	case s[0] != '/':
		return "", errors.New("want a rewrite target that starts with /, such as /api/$1")
	}
	groups = min(max(groups, 0), maxRegexGroups)
	pathEnd := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '$':
			if i+1 == len(s) || s[i+1] < '1' || s[i+1] > '9' {
				return "", errors.New("rewrite target may use $ only in a capture reference $1 to $9; nginx would expand anything else as a variable")
			}
			if n := int(s[i+1] - '0'); n > groups {
				return "", fmt.Errorf("rewrite target refers to $%d, but the path regex has %d capture groups", n, groups)
			}
			i++
		case c == '?':
			if pathEnd != len(s) {
				return "", errors.New("rewrite target must hold at most one ?")
			}
			pathEnd = i
		case !rewriteChars[c]:
			return "", fmt.Errorf("rewrite target must not contain %s", describeByte(c))
		}
	}
	p := s[:pathEnd]
	if strings.Contains(p, "//") {
		return "", errors.New("rewrite target must not contain //")
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return "", errors.New("rewrite target must not contain . or .. segments")
		}
	}
	return s, nil
}

// --- URLs ----------------------------------------------------------------

// maxURLLen bounds a redirect or mirror URL.
const maxURLLen = 2048

// urlChars are the bytes a redirect or mirror URL may hold as written.
// Parts are checked more narrowly after parsing.
var urlChars = newCharSet("._~!*()+,=:@&/?%-[]")

// URL path and query grammars, with %XX escapes.
var (
	urlPath  = regexp.MustCompile(`^(?:/(?:[A-Za-z0-9._~!*()+,=:@&/-]|%[0-9A-Fa-f]{2})*)?$`)
	urlQuery = regexp.MustCompile(`^(?:[A-Za-z0-9._~!*()+,=:@&/?-]|%[0-9A-Fa-f]{2})*$`)
)

// ParseRedirectURL checks a permanent-redirect or temporal-redirect target
// and returns it rebuilt from its parsed parts. The grammar: at most 2048
// bytes; an absolute URL with scheme http or https (any case, returned in
// lower case); a host that is a DNS name (returned in lower case), an IPv4
// address or a bracketed IPv6 address without zone; an optional port 1 to
// 65535; a path of ASCII letters, digits, . _ ~ ! * ( ) + , = : @ & / -
// and %XX escapes; a query of the same plus "?" and "%XX". User
// information, fragments and "$" anywhere are refused, as are quotes,
// whitespace, "\", ";", braces and non-ASCII bytes. An empty query ("?")
// and an empty port (":") are dropped.
func ParseRedirectURL(s string) (string, error) {
	return parseHTTPURL(s, "redirect URL")
}

// requestURI is the one nginx variable a mirror URL may end with.
const requestURI = "$request_uri"

// ParseMirrorURL checks a mirror-target: a URL as ParseRedirectURL accepts
// it, rebuilt the same way, that may also end in the literal nginx
// variable "$request_uri" (as in https://mirror.example.com$request_uri).
// Before the variable there may be a path, but no query and no trailing
// "/" (the request URI starts with one). The variable is kept verbatim;
// any other "$" is refused, as an unchecked mirror-target was how
// CVE-2025-1098 injected configuration into ingress-nginx.
func ParseMirrorURL(s string) (string, error) {
	base, ok := strings.CutSuffix(s, requestURI)
	if !ok {
		return parseHTTPURL(s, "mirror URL")
	}
	if len(s) > maxURLLen {
		return "", fmt.Errorf("mirror URL is %d bytes long, more than %d", len(s), maxURLLen)
	}
	if strings.ContainsAny(base, "?#") {
		return "", errors.New("mirror URL must not have a query before $request_uri")
	}
	out, err := parseHTTPURL(base, "mirror URL")
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(base, "/") {
		return "", errors.New("mirror URL must not end with / before $request_uri, which starts with one")
	}
	return out + requestURI, nil
}

// parseHTTPURL implements ParseRedirectURL; what names the value in
// errors.
func parseHTTPURL(s, what string) (string, error) {
	if len(s) > maxURLLen {
		return "", fmt.Errorf("%s is %d bytes long, more than %d", what, len(s), maxURLLen)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '$':
			return "", fmt.Errorf("%s must not contain '$': nginx would expand it as a variable", what)
		case c == '#':
			return "", fmt.Errorf("%s must not have a fragment", what)
		case !urlChars[c]:
			return "", fmt.Errorf("%s must not contain %s", what, describeByte(c))
		}
	}
	want := fmt.Errorf("%s: want an absolute http or https URL such as https://example.com/path", what)
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return "", want
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%s must use http or https", what)
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority = rest[:i]
	}
	if strings.Contains(authority, "@") {
		return "", fmt.Errorf("%s must not hold a user name or password", what)
	}
	if strings.Contains(authority, "%") {
		return "", fmt.Errorf("%s must not have escapes in its host", what)
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return "", want
	}
	host, err := urlHost(u.Hostname(), strings.HasPrefix(u.Host, "["), false)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	port := ""
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || len(p) > 5 || n < 1 || n > 65535 {
			return "", fmt.Errorf("%s must have a port between 1 and 65535", what)
		}
		port = ":" + strconv.Itoa(n)
	}
	p := u.EscapedPath()
	if !urlPath.MatchString(p) {
		return "", fmt.Errorf("%s must have a path of letters, digits, %%XX escapes and -._~!*()+,=:@&/", what)
	}
	q := u.RawQuery
	if !urlQuery.MatchString(q) {
		return "", fmt.Errorf("%s must have a query of letters, digits, %%XX escapes and -._~!*()+,=:@&/?", what)
	}
	if q != "" {
		q = "?" + q
	}
	out := scheme + "://" + host + port + p + q
	if len(out) > maxURLLen { // an IPv6 address may print longer
		return "", fmt.Errorf("%s is %d bytes long, more than %d", what, len(out), maxURLLen)
	}
	return out, nil
}

// urlHost checks and normalizes the host of a URL or origin: a DNS name
// (lower-cased), an IPv4 address, or when bracketed is true an IPv6
// address (returned in brackets). wildcard allows a leading "*." label.
// h holds only ASCII.
func urlHost(h string, bracketed, wildcard bool) (string, error) {
	if bracketed {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", errors.New("want an IPv6 address without zone in brackets")
		}
		return "[" + a.String() + "]", nil
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Is4() {
		return a.String(), nil
	}
	h = strings.ToLower(h)
	var errs []string
	if wildcard && strings.HasPrefix(h, "*.") {
		errs = validation.IsWildcardDNS1123Subdomain(h)
	} else {
		errs = validation.IsDNS1123Subdomain(h)
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("host %q is not a DNS name or IP address", Truncate(h))
	}
	// A name ending in a number is read as an IPv4 address by browsers
	// and resolvers ("0x7f.1", "127.1"); only a dotted quad is accepted.
	last := h[strings.LastIndexByte(h, '.')+1:]
	if strings.HasPrefix(last, "0x") || strings.Trim(last, "0123456789") == "" {
		return "", fmt.Errorf("host %q looks like an IPv4 address but is not a dotted quad", Truncate(h))
	}
	return h, nil
}

// --- CORS ----------------------------------------------------------------

// Bounds on CORS origins.
const (
	maxOriginLen = 300 // "https://" + a 253-byte name + ":65535", and then some
	maxOrigins   = 64
)

// originChars are the bytes an origin may hold as written.
var originChars = newCharSet(".:/*-")

// ParseCORSOrigin checks one CORS origin and returns it in lower case. The
// grammar: exactly "*", or scheme://host[:port] where scheme is http or
// https, host is a DNS name, an IPv4 address or a DNS name after a "*."
// wildcard label, and port is 1 to 65535 without leading zeros. The port
// is dropped when it is the scheme's default, as browsers never send it.
// No path, not even a trailing "/"; at most 300 bytes.
func ParseCORSOrigin(s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	want := errors.New("want an origin such as https://example.com, https://*.example.com:8443 or *")
	if s == "" || len(s) > maxOriginLen {
		return "", want
	}
	for i := 0; i < len(s); i++ {
		if !originChars[s[i]] {
			return "", fmt.Errorf("origin must not contain %s", describeByte(s[i]))
		}
	}
	s = strings.ToLower(s) // ASCII only, checked above
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return "", want
	}
	if strings.Contains(rest, "/") {
		return "", fmt.Errorf("origin %q must not have a path or a trailing /", Truncate(s))
	}
	host, port, hasPort := strings.Cut(rest, ":")
	h, err := urlHost(host, false, true)
	if err != nil {
		return "", fmt.Errorf("origin: %w", err)
	}
	out := scheme + "://" + h
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || port[0] == '0' || len(port) > 5 || n < 1 || n > 65535 {
			return "", fmt.Errorf("origin %q must have a port between 1 and 65535", Truncate(s))
		}
		if !(scheme == "http" && n == 80) && !(scheme == "https" && n == 443) {
			out += ":" + port
		}
	}
	return out, nil
}

// ParseCORSOrigins parses ingress-nginx's cors-allow-origin: origins as
// ParseCORSOrigin accepts them, separated by commas with optional spaces
// or tabs around them. Empty items are refused, as are more than 64 items
// as written (duplicates count, so work on hostile input is bounded).
// Duplicates are dropped and the order kept. "*" must stand alone.
func ParseCORSOrigins(s string) ([]string, error) {
	items, err := splitList(s, "origins")
	if err != nil {
		return nil, err
	}
	if len(items) > maxOrigins {
		return nil, fmt.Errorf("want at most %d origins, not %d", maxOrigins, len(items))
	}
	var out []string
	for _, it := range items {
		o, err := ParseCORSOrigin(it)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	if len(out) > 1 && slices.Contains(out, "*") {
		return nil, errors.New("origin * allows every origin and must stand alone")
	}
	return out, nil
}

// --- Lists ---------------------------------------------------------------

// NextUpstreamConditions are proxy_next_upstream's conditions.
var NextUpstreamConditions = map[string]bool{
	"error": true, "timeout": true, "invalid_header": true, "http_500": true, "http_502": true, "http_503": true,
	"http_504": true, "http_403": true, "http_404": true, "http_429": true, "non_idempotent": true, "off": true,
}

// ParseNextUpstream parses proxy_next_upstream's conditions
// (ingress-nginx's proxy-next-upstream, a VirtualServer upstream's
// next-upstream), separated by spaces or commas; off must stand alone.
func ParseNextUpstream(s string) ([]string, error) {
	v, err := ParseTokenList(s, NextUpstreamConditions, len(NextUpstreamConditions)-1)
	if err != nil {
		return nil, err
	}
	if len(v) > 1 && slices.Contains(v, "off") {
		return nil, errors.New("off turns retries off and must stand alone")
	}
	return v, nil
}

// ParseTokenList parses a list of tokens separated by commas, spaces or
// tabs, or several of them ("GET, POST" or "GET POST"), where every token
// is a key of allowed whose value is true. Tokens match case-insensitively
// in ASCII and are returned spelled as the key. Empty items between
// commas are refused, as is a list of more than max tokens as written
// (duplicates count; a max below 1 refuses every list). Duplicates are
// dropped and the order kept. The keys of allowed must differ in more than
// case.
func ParseTokenList(s string, allowed map[string]bool, max int) ([]string, error) {
	names := make([]string, 0, len(allowed))
	for k, ok := range allowed {
		if ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	want := fmt.Errorf("want a list of %s", strings.Join(names, ", "))
	var tokens []string
	for piece := range strings.SplitSeq(s, ",") {
		fields := strings.FieldsFunc(piece, func(r rune) bool { return r == ' ' || r == '\t' })
		if len(fields) == 0 {
			return nil, want
		}
		tokens = append(tokens, fields...)
		if len(tokens) > max {
			return nil, fmt.Errorf("want at most %d items", max)
		}
	}
	var out []string
	for _, tok := range tokens {
		i := slices.IndexFunc(names, func(n string) bool { return asciiEqualFold(n, tok) })
		if i < 0 {
			return nil, fmt.Errorf("%q is not one of %s", Truncate(tok), strings.Join(names, ", "))
		}
		if !slices.Contains(out, names[i]) {
			out = append(out, names[i])
		}
	}
	return out, nil
}

// asciiEqualFold is strings.EqualFold for ASCII letters only, so that
// "\u212a" (the Kelvin sign) does not match "k".
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}

// ParseHeaderNameList parses cors-allow-headers and cors-expose-headers:
// header names as ParseHeaderName accepts them, separated by commas with
// optional spaces or tabs around them, or exactly "*". Empty items are
// refused, as is a list of more than max names as written. Names that
// differ only in case are duplicates; the first spelling is kept, and the
// order.
func ParseHeaderNameList(s string, max int) ([]string, error) {
	if strings.Trim(s, " \t") == "*" {
		return []string{"*"}, nil
	}
	items, err := splitList(s, "header names")
	if err != nil {
		return nil, err
	}
	if len(items) > max {
		return nil, fmt.Errorf("want at most %d header names, not %d", max, len(items))
	}
	var out []string
	for _, it := range items {
		if it == "*" {
			return nil, errors.New("header name * allows every header and must stand alone")
		}
		n, err := ParseHeaderName(it)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, n) }) {
			out = append(out, n)
		}
	}
	return out, nil
}

// maxStatusCodes bounds a list of status codes.
const maxStatusCodes = 50

// ParseStatusCodes parses custom-http-errors: HTTP status codes 400 to 599
// written as three digits, separated by commas with optional spaces or
// tabs around them. Empty items are refused, as are more than 50 codes as
// written. The result is sorted with duplicates dropped.
func ParseStatusCodes(s string) ([]int, error) {
	items, err := splitList(s, "status codes")
	if err != nil {
		return nil, err
	}
	if len(items) > maxStatusCodes {
		return nil, fmt.Errorf("want at most %d status codes, not %d", maxStatusCodes, len(items))
	}
	out := make([]int, 0, len(items))
	for _, it := range items {
		n, err := strconv.Atoi(it)
		if err != nil || len(it) != 3 || n < 400 || n > 599 {
			return nil, fmt.Errorf("want status codes between 400 and 599, not %q", Truncate(it))
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// --- Other values --------------------------------------------------------

// maxCipherListLen bounds an OpenSSL cipher list.
const maxCipherListLen = 1024

// cipherChars are the bytes of an OpenSSL cipher list.
var cipherChars = newCharSet(":+!@._=-")

// ParseCipherList checks an OpenSSL cipher string such as
// "ECDHE+AESGCM:!aNULL:@SECLEVEL=2": 1 to 1024 bytes of ASCII letters,
// digits and : + ! @ . _ = -. Only the syntax is checked: OpenSSL itself
// refuses a list that names no cipher it knows.
func ParseCipherList(s string) (string, error) {
	if s == "" || len(s) > maxCipherListLen {
		return "", fmt.Errorf("want a cipher list such as ECDHE+AESGCM:!aNULL of 1 to %d bytes", maxCipherListLen)
	}
	for i := 0; i < len(s); i++ {
		if !cipherChars[s[i]] {
			return "", fmt.Errorf("cipher list must hold only letters, digits and :+!@._=-, not %s", describeByte(s[i]))
		}
	}
	return s, nil
}

// cipherItem is one item of an OpenSSL cipher list: a cipher or alias
// name (joined by '+' for an intersection), optionally after !, - or +,
// or a @SECLEVEL or @STRENGTH command.
var cipherItem = regexp.MustCompile(`^([!+-]?[A-Za-z0-9][A-Za-z0-9._=-]*(\+[A-Za-z0-9][A-Za-z0-9._=-]*)*|@SECLEVEL=[0-5]|@STRENGTH)$`)

// ParseServerCiphers checks the cipher list of the HTTPS listeners
// (ssl-ciphers, as a ConfigMap key or an annotation): ParseCipherList,
// and each ':'-separated item a cipher or alias name, a !, - or + of one,
// or @SECLEVEL=0..5 or @STRENGTH.
func ParseServerCiphers(s string) (string, error) {
	list, err := ParseCipherList(s)
	if err != nil {
		return "", err
	}
	for _, item := range strings.Split(list, ":") {
		if !cipherItem.MatchString(item) {
			return "", fmt.Errorf("%q is not a cipher name, an alias such as HIGH, a !, - or + of one, or @SECLEVEL=0..5", Truncate(item))
		}
	}
	return list, nil
}

// ParseBool parses a boolean as ingress-nginx does: whatever
// strconv.ParseBool accepts (1, t, T, TRUE, true, True, 0, f, F, FALSE,
// false, False), and "true" and "false" in any case.
func ParseBool(s string) (bool, error) {
	switch {
	case asciiEqualFold(s, "true"):
		return true, nil
	case asciiEqualFold(s, "false"):
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}

// --- Header block lists ----------------------------------------------

// maxHeaderMatches bounds block-user-agents and block-referers.
const maxHeaderMatches = 256

// ParseHeaderMatches reads ingress-nginx's block-user-agents and
// block-referers: a comma-separated list of entries, each either a string
// the whole header must equal (ignoring ASCII case, as nginx's map
// compares strings), "~regex" searched for in the header, or "~*regex"
// searched for ignoring case. Strings follow ParseHeaderValue and may not
// start with "~" or "\" nor be "default" or "include", which nginx's map
// reads as its own parameters; regexes follow ParseHeaderRegex. At most
// 256 entries; duplicates are dropped.
func ParseHeaderMatches(s string) ([]HeaderMatch, error) {
	items, err := splitList(s, "strings or ~regexes")
	if err != nil {
		return nil, err
	}
	var out []HeaderMatch
	for _, item := range items {
		m, err := parseHeaderMatch(item)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", Truncate(item), err)
		}
		if slices.Contains(out, m) {
			continue
		}
		if len(out) == maxHeaderMatches {
			return nil, fmt.Errorf("want at most %d distinct entries", maxHeaderMatches)
		}
		out = append(out, m)
	}
	return out, nil
}

func parseHeaderMatch(item string) (HeaderMatch, error) {
	if re, ok := strings.CutPrefix(item, "~"); ok {
		m := HeaderMatch{Regex: true}
		if m.Value, ok = strings.CutPrefix(re, "*"); ok {
			m.Fold = true
		} else {
			m.Value = re
		}
		var err error
		m.Value, err = ParseHeaderRegex(m.Value)
		return m, err
	}
	v, err := ParseHeaderValue(item)
	if err != nil {
		return HeaderMatch{}, err
	}
	if asciiEqualFold(item, "default") || asciiEqualFold(item, "include") {
		return HeaderMatch{}, errors.New("nginx's map reads this word as its own parameter")
	}
	return HeaderMatch{Value: string(v)}, nil
}

// --- Address lists -------------------------------------------------------

// ParseCIDRList reads a comma-separated list of at most max CIDRs or single
// addresses, IPv4 or IPv6, with spaces and tabs around items allowed. Each
// becomes a prefix (a single address its /32 or /128), duplicates are
// dropped and the order is kept. Refused, with the entry named: an empty
// list or item, a zone ("fe80::1%eth0"), a prefix with host bits set
// ("10.0.0.1/8", which nginx would widen with only a warning), an
// IPv4-mapped IPv6 address (nginx compares IPv4 clients as IPv4), and
// anything netip does not parse (leading zeros, hostnames, ranges).
func ParseCIDRList(s string, max int) ([]netip.Prefix, error) {
	items, err := splitList(s, "CIDRs or IP addresses")
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	seen := map[netip.Prefix]bool{}
	for _, item := range items {
		p, err := ParseCIDR(item)
		if err != nil {
			return nil, err
		}
		if p.Addr().Is4In6() {
			return nil, fmt.Errorf("%q is an IPv4-mapped IPv6 address; write the IPv4 form", Truncate(item))
		}
		if seen[p] {
			continue
		}
		if len(out) == max {
			return nil, fmt.Errorf("want at most %d distinct CIDRs", max)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// ParseCIDR reads one CIDR or single address (as its /32 or /128), masked
// (host bits set are refused) and without zone.
func ParseCIDR(item string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(item, "/") {
		var err error
		if p, err = netip.ParsePrefix(item); err != nil {
			return p, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or 2001:db8::/32", Truncate(item))
		}
		if p != p.Masked() {
			return p, fmt.Errorf("%q has host bits set; did you mean %s?", item, p.Masked())
		}
	} else {
		a, err := netip.ParseAddr(item)
		if err != nil || a.Zone() != "" {
			return p, fmt.Errorf("%q is not an IP address or a CIDR such as 10.0.0.0/8", Truncate(item))
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	return p, nil
}
