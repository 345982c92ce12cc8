// Package spec holds the Kubernetes Ingress rules as data, so that the pure
// model tests and the real-nginx integration tests check the same table.
package spec

// Path is one Ingress path with its type.
type Path struct {
	Path string
	Type string // Exact, Prefix or ImplementationSpecific
}

// PathCase is one line of the Kubernetes documentation's path-matching
// table (https://kubernetes.io/docs/concepts/services-networking/ingress/#examples),
// plus the precedence rules stated around it.
type PathCase struct {
	Name    string
	Paths   []Path
	Request string
	// Want is the index in Paths of the path that must serve the request,
	// or -1 when none matches (the default backend answers).
	Want int
}

// PathTable is the documentation's table, one row per line; a row with
// several request paths in the documentation appears once per request.
var PathTable = []PathCase{
	{"prefix root matches all paths", []Path{{"/", "Prefix"}}, "/anything/at/all", 0},
	{"prefix root matches root", []Path{{"/", "Prefix"}}, "/", 0},
	{"exact matches itself", []Path{{"/foo", "Exact"}}, "/foo", 0},
	{"exact does not match another path", []Path{{"/foo", "Exact"}}, "/bar", -1},
	{"exact does not match a trailing slash", []Path{{"/foo", "Exact"}}, "/foo/", -1},
	{"exact with slash does not match without", []Path{{"/foo/", "Exact"}}, "/foo", -1},
	{"prefix matches itself", []Path{{"/foo", "Prefix"}}, "/foo", 0},
	{"prefix matches itself with trailing slash", []Path{{"/foo", "Prefix"}}, "/foo/", 0},
	{"prefix with slash matches without", []Path{{"/foo/", "Prefix"}}, "/foo", 0},
	{"prefix with slash matches with", []Path{{"/foo/", "Prefix"}}, "/foo/", 0},
	{"prefix is not a string prefix of the last element", []Path{{"/aaa/bb", "Prefix"}}, "/aaa/bbb", -1},
	{"prefix matches equal path", []Path{{"/aaa/bbb", "Prefix"}}, "/aaa/bbb", 0},
	{"prefix ignores its trailing slash", []Path{{"/aaa/bbb/", "Prefix"}}, "/aaa/bbb", 0},
	{"prefix matches request trailing slash", []Path{{"/aaa/bbb", "Prefix"}}, "/aaa/bbb/", 0},
	{"prefix matches subpath", []Path{{"/aaa/bbb", "Prefix"}}, "/aaa/bbb/ccc", 0},
	{"prefix does not match string prefix", []Path{{"/aaa/bbb", "Prefix"}}, "/aaa/bbbxyz", -1},
	{"longest prefix wins", []Path{{"/", "Prefix"}, {"/aaa", "Prefix"}}, "/aaa/ccc", 1},
	{"longest of three prefixes wins", []Path{{"/", "Prefix"}, {"/aaa", "Prefix"}, {"/aaa/bbb", "Prefix"}}, "/aaa/bbb", 2},
	{"root prefix catches the rest", []Path{{"/", "Prefix"}, {"/aaa", "Prefix"}, {"/aaa/bbb", "Prefix"}}, "/ccc", 0},
	{"no match uses the default backend", []Path{{"/aaa", "Prefix"}}, "/ccc", -1},
	{"exact beats prefix on a tie", []Path{{"/foo", "Prefix"}, {"/foo", "Exact"}}, "/foo", 1},
	{"prefix still serves subpaths beside exact", []Path{{"/foo", "Prefix"}, {"/foo", "Exact"}}, "/foo/bar", 0},
	{"matching is case-sensitive", []Path{{"/foo", "Prefix"}}, "/FOO", -1},
	{"implementation-specific behaves as prefix", []Path{{"/foo", "ImplementationSpecific"}}, "/foo/bar", 0},
	{"implementation-specific is element-wise", []Path{{"/foo", "ImplementationSpecific"}}, "/foobar", -1},
	{"longer exact beats shorter prefix", []Path{{"/aaa", "Prefix"}, {"/aaa/bbb", "Exact"}}, "/aaa/bbb", 1},
	{"exact does not shadow prefix below it", []Path{{"/aaa", "Prefix"}, {"/aaa/bbb", "Exact"}}, "/aaa/bbb/ccc", 0},
}

// HostCase is a request host against a rule host.
type HostCase struct {
	Name    string
	Rule    string
	Request string
	Match   bool
}

// HostTable covers exact and wildcard hosts.
var HostTable = []HostCase{
	{"exact host", "foo.bar.com", "foo.bar.com", true},
	{"exact host is case-insensitive", "foo.bar.com", "FOO.bar.com", true},
	{"exact host mismatch", "foo.bar.com", "bar.bar.com", false},
	{"wildcard matches one label", "*.foo.com", "bar.foo.com", true},
	{"wildcard does not match two labels", "*.foo.com", "baz.bar.foo.com", false},
	{"wildcard does not match the bare suffix", "*.foo.com", "foo.com", false},
	{"wildcard needs a non-empty label", "*.foo.com", ".foo.com", false},
	{"no host matches any host", "", "whatever.example", true},
}
