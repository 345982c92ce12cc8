package model

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Access log values: the format of ingress-nginx's log-format-upstream key
// and the paths of skip-access-log-urls.

// DefaultLogFormat is ingress-nginx's default log-format-upstream
// ("upstreaminfo"), so that existing log parsers keep working.
const DefaultLogFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id`

// LogVariables are the variables a log format may use: nginx's own, and
// the ones ingress-nginx defines for its logs (marked true), which the
// renderer defines in every configuration.
var LogVariables = func() map[string]bool {
	m := map[string]bool{}
	for k, v := range baseLogVariables {
		m[k] = v
	}
	// ingress-nginx's GeoIP2 variables: empty without use-geoip2.
	for _, n := range GeoIP2VariableNames() {
		m[n] = true
	}
	return m
}()

var baseLogVariables = map[string]bool{
	"remote_addr": false, "remote_user": false, "time_local": false, "time_iso8601": false,
	"request": false, "request_method": false, "request_uri": false, "uri": false, "args": false,
	"server_protocol": false, "status": false, "body_bytes_sent": false, "bytes_sent": false,
	"http_referer": false, "http_user_agent": false, "http_x_forwarded_for": false,
	"request_length": false, "request_time": false, "upstream_addr": false, "upstream_status": false,
	"upstream_response_time": false, "upstream_response_length": false,
	"upstream_connect_time": false, "upstream_header_time": false, "host": false,
	"server_name": false, "server_port": false, "scheme": false, "ssl_protocol": false,
	"ssl_cipher": false, "msec": false, "connection": false, "connection_requests": false,
	"pipe": false, "request_id": false, "http_host": false,
	"pid": false, "hostname": false, "remote_port": false, "server_addr": false,
	"request_completion": false, "upstream_bytes_received": false, "upstream_bytes_sent": false,
	"upstream_cache_status": false, "ssl_server_name": false, "ssl_session_reused": false,
	"gzip_ratio": false,
	// ingress-nginx's.
	"proxy_upstream_name": true, "proxy_alternative_upstream_name": true, "req_id": true,
	"namespace": true, "ingress_name": true, "service_name": true, "service_port": true,
	"location_path": true,
}

// maxLogFormat keeps the format, quoted, inside one nginx token (4 KiB).
const maxLogFormat = 4000

// LogFormatPart is a run of literal text or one variable.
type LogFormatPart struct {
	// Literal is printable ASCII other than ' and \ and $.
	Literal string
	// Variable is a name from LogVariables, without the "$".
	Variable string
}

// LogFormat is a parsed access log format: literal text and variables.
type LogFormat []LogFormatPart

// ParseLogFormat parses an nginx log format string. Every "$name" must name
// a variable of LogVariables; "${name}", a "$" without a name, "'" (which
// would end nginx's quoted format), "\", control characters and non-ASCII
// bytes are refused, as is an empty or over-long format. A variable name
// runs as far as nginx reads it, over letters, digits and "_": "$statusx"
// is the variable "statusx", which is refused.
func ParseLogFormat(s string) (LogFormat, error) {
	if s == "" || len(s) > maxLogFormat {
		return nil, fmt.Errorf("want a log format of 1 to %d bytes", maxLogFormat)
	}
	var f LogFormat
	lit := 0 // start of the current literal
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '$':
			if i > lit {
				f = append(f, LogFormatPart{Literal: s[lit:i]})
			}
			j := i + 1
			for j < len(s) && isVarByte(s[j]) {
				j++
			}
			name := s[i+1 : j]
			switch {
			case j < len(s) && s[j] == '{' && name == "":
				return nil, errors.New(`log format must not use "${...}": write $name`)
			case name == "":
				return nil, errors.New(`log format holds a "$" that starts no variable`)
			}
			if _, ok := LogVariables[name]; !ok {
				return nil, fmt.Errorf("log format variable $%s is not one Causeway allows", Truncate(name))
			}
			f = append(f, LogFormatPart{Variable: name})
			i, lit = j, j
		case c == '\'' || c == '\\' || c < ' ' || c >= 0x7f:
			return nil, fmt.Errorf("log format must not contain %s", describeByte(c))
		default:
			i++
		}
	}
	if lit < len(s) {
		f = append(f, LogFormatPart{Literal: s[lit:]})
	}
	return f, nil
}

func isVarByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// MustLogFormat parses a format known to be valid.
func MustLogFormat(s string) LogFormat {
	f, err := ParseLogFormat(s)
	if err != nil {
		panic(err)
	}
	return f
}

// String is the format as nginx reads it.
func (f LogFormat) String() string {
	var b strings.Builder
	for _, p := range f {
		if p.Variable != "" {
			b.WriteString("$" + p.Variable)
		} else {
			b.WriteString(p.Literal)
		}
	}
	return b.String()
}

// Uses reports whether the format prints variable name.
func (f LogFormat) Uses(name string) bool {
	for _, p := range f {
		if p.Variable == name {
			return true
		}
	}
	return false
}

// maxSkipLogPaths bounds skip-access-log-urls.
const maxSkipLogPaths = 256

// skipLogPathChars are the bytes of a path skip-access-log-urls may list.
var skipLogPathChars = newCharSet("/._~!*()+,=:@&-")

// ParseSkipLogPaths parses skip-access-log-urls: a comma-separated list of
// exact URL paths, each starting with "/", of at most 1024 bytes of
// [A-Za-z0-9/._~!*()+,=:@&-] (no query string, no percent escapes: the
// path is compared with nginx's decoded $uri). The empty string is the
// empty list. Duplicates are dropped.
func ParseSkipLogPaths(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	items, err := splitList(s, "paths")
	if err != nil {
		return nil, err
	}
	if len(items) > maxSkipLogPaths {
		return nil, fmt.Errorf("want at most %d paths", maxSkipLogPaths)
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range items {
		if p[0] != '/' || len(p) > 1024 {
			return nil, fmt.Errorf("path %q: want a path of at most 1024 bytes that starts with /", Truncate(p))
		}
		for i := 0; i < len(p); i++ {
			if !skipLogPathChars[p[i]] {
				return nil, fmt.Errorf("path %q must not contain %s", Truncate(p), describeByte(p[i]))
			}
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// AccessLogParams are the access_log options ingress-nginx's
// access-log-params may set that make sense for a log nginx writes to a
// stream: a buffer, and how long a line may wait in it.
type AccessLogParams struct {
	// Buffer is the buffer size in bytes (0: every line written at once).
	Buffer int64
	// Flush is the longest a line waits in the buffer (0: until it fills).
	Flush time.Duration
}

// maxLogBuffer bounds the access log buffer, which each worker holds.
const maxLogBuffer = 8 << 20

// ParseAccessLogParams parses access-log-params: space-separated
// buffer=SIZE and flush=TIME, each at most once, flush only with buffer.
// gzip (compressed lines in a text stream), if= (Causeway's own
// condition) and anything else are refused.
func ParseAccessLogParams(s string) (AccessLogParams, error) {
	var p AccessLogParams
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		name, value, ok := strings.Cut(f, "=")
		if seen[name] {
			return AccessLogParams{}, fmt.Errorf("%q is given twice", name)
		}
		seen[name] = true
		switch {
		case name == "buffer" && ok:
			n, err := ParseSize(value)
			if err != nil {
				return AccessLogParams{}, fmt.Errorf("buffer: %w", err)
			}
			if n < 1 || n > maxLogBuffer {
				return AccessLogParams{}, fmt.Errorf("buffer: want 1 byte to %s", FormatSize(maxLogBuffer))
			}
			p.Buffer = n
		case name == "flush" && ok:
			d, err := ParseTimeout(value)
			if err != nil {
				return AccessLogParams{}, fmt.Errorf("flush: %w", err)
			}
			p.Flush = d
		case name == "gzip":
			return AccessLogParams{}, errors.New("gzip: the access log is a stream of text lines (nginx writes it to stderr), so it is not compressed")
		default:
			return AccessLogParams{}, fmt.Errorf("%q: want buffer=SIZE and flush=TIME only", f)
		}
	}
	if p.Flush > 0 && p.Buffer == 0 {
		return AccessLogParams{}, errors.New("flush needs buffer")
	}
	return p, nil
}
