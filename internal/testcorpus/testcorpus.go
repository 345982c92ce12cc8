// Package testcorpus holds the injection corpus that the grammar, parser
// and renderer tests share: values that try to break out of nginx.conf
// syntax, expand variables, smuggle line breaks or look-alike characters,
// traverse paths, exhaust bounds, or make PCRE and RE2 disagree.
package testcorpus

import "strings"

// Injection are hostile values: nginx.conf syntax, variables, line
// breaks, invisible and look-alike characters, percent escapes, path
// traversal, oversized values and regexes PCRE and RE2 disagree on or that
// backtrack badly.
var Injection = []string{
	`"; return 200 "x`,
	"}\nserver {",
	"a\nb",
	"a\rb",
	"a\r\nX-Injected: 1",
	"a\x00b",
	"$host",
	"${x}",
	`\"`,
	"#",
	"`id`",
	";",
	"{",
	"}",
	`\`,
	"\u0430dmin",    // Cyrillic a
	"\u212aelvin",   // Kelvin sign, which lower-cases to k
	"\u202egnp.exe", // right-to-left override
	"a\u200bb",      // zero-width space
	"a\u00a0b",      // no-break space
	"\xff\xfe",      // invalid UTF-8
	"\x1b[31m",      // terminal escape
	"a\x7f",
	"\t",
	" x",
	"%00",
	"..",
	"/../../etc/passwd",
	strings.Repeat("a", 5000),
	strings.Repeat("/a", 2000),
	"(?=a)",
	`(a)\1`,
	"a{1001}",
	"((a*)*)*b",
	"content_by_lua_block { os.execute('id') }",
	"lua_need_request_body on;",
	"include /etc/passwd;",
	"' or '1'='1",
	"$request_uri",
	"$1",
	"/$host",
	"/${1}",
	"https://a.example/$host",
	`https://a.example/"; return 200 "x`,
	"https://a.example/#frag",
	"https://user:pw@a.example/",
	"https://a.example\r\nX: y",
	"javascript:alert(1)",
	"//evil.example",
}
