package snippet

import (
	"reflect"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestParseMap: map blocks of an http snippet, one row per rule of their
// grammar.
func TestParseMap(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []model.SnippetMap
		err       string
	}{
		{"literal and regex keys, a default", "map $http_user_agent $is_bot {\n default 0;\n \"\" 2;\n curl 3;\n ~*bot 1;\n ~^Go 4;\n}",
			[]model.SnippetMap{{Source: tpl(vr("http_user_agent")), Variable: "is_bot", Default: tpl(lit("0")), HasDefault: true,
				Entries: []model.MapEntry{{Key: "", Value: tpl(lit("2"))}, {Key: "curl", Value: tpl(lit("3"))},
					{Op: "~*", Key: "bot", Value: tpl(lit("1"))}, {Op: "~", Key: "^Go", Value: tpl(lit("4"))}}}}, ""},
		{"a source of variables and text, values with variables", `map "$host:$arg_v" $pick { "a.test:1" "x-$host"; }`,
			[]model.SnippetMap{{Source: tpl(vr("host"), lit(":"), vr("arg_v")), Variable: "pick",
				Entries: []model.MapEntry{{Key: "a.test:1", Value: tpl(lit("x-"), vr("host"))}}}}, ""},
		{"a key with spaces", `map $http_x $v { "a b" 1; }`,
			[]model.SnippetMap{{Source: tpl(vr("http_x")), Variable: "v", Entries: []model.MapEntry{{Key: "a b", Value: tpl(lit("1"))}}}}, ""},
		{"two maps, the second reading the first", "map $http_x $a { default 1; }\nmap $a $b { 1 yes; }",
			[]model.SnippetMap{{Source: tpl(vr("http_x")), Variable: "a", Default: tpl(lit("1")), HasDefault: true},
				{Source: tpl(vr("a")), Variable: "b", Entries: []model.MapEntry{{Key: "1", Value: tpl(lit("yes"))}}}}, ""},

		{"hostnames", "map $http_x $v { hostnames; }", nil, `"hostnames" is not supported`},
		{"volatile", "map $http_x $v { volatile; }", nil, `"volatile" is not supported`},
		{"include", "map $http_x $v { include /etc/passwd; }", nil, `"include" is not supported`},
		{"a source without a variable", "map abc $v { default 1; }", nil, `holds no variable`},
		{"a source variable a snippet may not read", "map $document_root $v { default 1; }", nil, `not one a snippet may read`},
		{"a value variable a snippet may not read", "map $http_x $v { a $upstream_addr; }", nil, `not one a snippet may read`},
		{"nginx's variable as the target", "map $http_x $args { default 1; }", nil, `nginx's own`},
		{"Causeway's variable as the target", "map $http_x $causeway_backend { default x; }", nil, `family`},
		{"a target without $", "map $http_x v { default 1; }", nil, `want $name`},
		{"a target defined twice", "map $http_x $v { default 1; }\nmap $http_y $v { default 2; }", nil, `defined twice`},
		{"a key twice", "map $http_x $v { a 1; a 2; }", nil, `listed twice`},
		{"a literal key with $", `map $http_x $v { "a$host" 1; }`, nil, `without $`},
		{"a key starting with \\", `map $http_x $v { "\~a" 1; }`, nil, `may not start with`},
		{"a regex with $", `map $http_x $v { "~a$" 1; }`, nil, `regex must not contain '$'`},
		{"a regex with lookahead", `map $http_x $v { "~(?=a)" 1; }`, nil, `regex`},
		{"three words", "map $http_x $v { a 1 2; }", nil, `want KEY VALUE`},
		{"a block in the map", "map $http_x $v { a { } }", nil, `KEY VALUE;`},
		{"unclosed", "map $http_x $v { a 1;", nil, `not closed`},
		{"three arguments", "map $http_x $v $w { a 1; }", nil, `want map SOURCE $variable`},
		{"a newline in a value", "map $http_x $v { a \"1\n2\"; }", nil, `newline`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parseOrRefuse(t, tc.src, HTTP, tc.err)
			if got == nil {
				return
			}
			if !reflect.DeepEqual(got.Maps, tc.want) {
				t.Fatalf("Parse(%q).Maps =\n %+v\nwant\n %+v", tc.src, got.Maps, tc.want)
			}
		})
	}
}

// TestParseReadingKnown: a snippet reads a map's variable only when told
// it exists.
func TestParseReadingKnown(t *testing.T) {
	src := "if ($is_bot) { return 403; }\nadd_header X-Bot $is_bot;"
	if _, err := Parse(src, Location); err == nil {
		t.Fatal("an unknown variable was read")
	}
	s, err := ParseReading(src, Location, []string{"is_bot"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Reads([]string{"other", "is_bot"}) != "is_bot" || s.Reads([]string{"other"}) != "" {
		t.Fatal("Reads does not find $is_bot")
	}
}
