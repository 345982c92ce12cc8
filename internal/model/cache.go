package model

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ResponseCache is a location's cache of its backends' responses (NGINX
// Ingress Controller's cache Policy): nginx's proxy_cache in a zone of
// Model.CacheZones.
type ResponseCache struct {
	// Zone is the CacheZone's Name.
	Zone string
	// Key is proxy_cache_key (ParseCacheTemplate).
	Key Template
	// Valid are proxy_cache_valid lines; empty leaves the time to the
	// backend's caching headers.
	Valid []CacheValid
	// Methods are proxy_cache_methods besides GET and HEAD (GET, HEAD,
	// POST); empty is nginx's default.
	Methods []string
	// IgnoreHeaders ignores the backend's Cache-Control, Expires,
	// Set-Cookie, Vary and X-Accel-Expires (overrideUpstreamCache).
	IgnoreHeaders bool
	// UseStale are proxy_cache_use_stale's cases (CacheUseStaleCases).
	UseStale []string
	// Revalidate and BackgroundUpdate are proxy_cache_revalidate and
	// proxy_cache_background_update.
	Revalidate, BackgroundUpdate bool
	// MinUses is proxy_cache_min_uses; 0 is nginx's default, 1.
	MinUses int
	// Lock is proxy_cache_lock, with its timeout and age when not 0.
	Lock                 bool
	LockTimeout, LockAge time.Duration
	// NoCache and Bypass are proxy_no_cache and proxy_cache_bypass: the
	// response is not stored, or not taken from the cache, when any of
	// them is neither empty nor "0".
	NoCache, Bypass []Template
}

// CacheValid caches responses of Codes (nil: nginx's 200, 301 and 302;
// Any: every status) for Duration.
type CacheValid struct {
	Codes    []int
	Any      bool
	Duration time.Duration
}

// CacheZone is a proxy_cache_path: its keys zone in shared memory and its
// files under the state directory's cache/ directory.
type CacheZone struct {
	// Name is nginx's zone name and the directory's: CacheZoneName.
	Name string
	// Size is the keys zone's size.
	Size Size
	// Levels is the directory hierarchy, such as "1:2"; "" is nginx's
	// default (one level).
	Levels string
	// Inactive, MaxSize and MinFree are nginx's parameters; 0 is
	// nginx's default.
	Inactive         time.Duration
	MaxSize, MinFree Size
	// UseTempPath writes responses to the temporary directory first.
	UseTempPath bool
	// ManagerFiles, ManagerSleep and ManagerThreshold tune the cache
	// manager; 0 is nginx's default.
	ManagerFiles                   int
	ManagerSleep, ManagerThreshold time.Duration
}

// Bounds of a cache Policy. A keys zone is shared memory every worker
// maps, so it is bounded; the files are bounded by max_size on disk.
const (
	MaxCacheZoneSize Size = 1 << 30
	MinCacheZoneSize Size = 8 << 10
	// MaxCacheZonesTotal bounds the keys zones of every cache together:
	// each zone is bounded, but one per object using a Policy would not
	// be.
	MaxCacheZonesTotal Size = 4 << 30
	MaxCacheConditions      = 16
	MaxCacheTime            = 365 * 24 * time.Hour
)

// CacheUseStaleCases are proxy_cache_use_stale's cases NGINX Ingress
// Controller accepts.
var CacheUseStaleCases = map[string]bool{"error": true, "timeout": true, "invalid_header": true, "updating": true,
	"http_500": true, "http_502": true, "http_503": true, "http_504": true, "http_403": true, "http_404": true,
	"http_429": true, "off": true}

// CacheVariables are the variables a cache key or condition may use: the
// request's own facts. $proxy_host is the balancer's upstream name for
// every location, so it reads as a constant.
var CacheVariables = VariableSet{Names: setOf("scheme", "host", "request_uri", "uri", "args", "is_args", "query_string",
	"request_method", "remote_addr", "server_name", "server_port", "https", "proxy_host", "content_type"),
	Prefixes: []string{"http_", "cookie_", "arg_"}}

// DefaultCacheKey is NGINX Ingress Controller's proxy_cache_key, less the
// upstream: $proxy_host names the balancer, so the host stands for it.
var DefaultCacheKey = Template{{Variable: "scheme"}, {Variable: "host"}, {Variable: "request_uri"}}

// cacheTimeSyntax is NGINX Ingress Controller's time: a whole number of
// seconds, minutes, hours or days.
var cacheTimeSyntax = regexp.MustCompile(`^([0-9]{1,9})([smhd])$`)

// ParseCacheTime reads a cache time such as 30s, 10m, 1h or 2d: more
// than 0 and at most MaxCacheTime.
func ParseCacheTime(s string) (time.Duration, error) {
	m := cacheTimeSyntax.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q: want a number followed by s, m, h or d", Truncate(s))
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	if n == 0 || n > int64(MaxCacheTime/unit) {
		return 0, fmt.Errorf("%q: want more than 0 and at most %dd", s, MaxCacheTime/(24*time.Hour))
	}
	return time.Duration(n) * unit, nil
}

// managerTimeSyntax is NGINX Ingress Controller's manager times: a whole
// number of seconds, milliseconds or microseconds.
var managerTimeSyntax = regexp.MustCompile(`^([0-9]{1,9})(s|ms|us)$`)

// ParseCacheManagerTime reads the cache manager's sleep or threshold,
// such as 50ms or 1s: at least 1ms (nginx's resolution) and at most a
// minute.
func ParseCacheManagerTime(s string) (time.Duration, error) {
	m := managerTimeSyntax.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q: want a number followed by s, ms or us", Truncate(s))
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	d := time.Duration(n) * map[string]time.Duration{"s": time.Second, "ms": time.Millisecond, "us": time.Microsecond}[m[2]]
	if d < time.Millisecond || d > time.Minute || d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%q: want whole milliseconds from 1ms to 1m", s)
	}
	return d, nil
}

// cacheLiteralChars may appear between the variables of a cache key or
// condition: printable ASCII without space, quotes, backslash, ";", "{",
// "}" or "$" (which starts a variable).
var cacheLiteralChars = newCharSet("!#%&()*+,-./:<=>?@[]^_`|~")

// ParseCacheTemplate reads a cache key or condition as nginx writes it:
// literal text and variables $name or ${name} from CacheVariables. The
// result is at most MaxTemplateLen bytes.
func ParseCacheTemplate(s string) (Template, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	if len(s) > MaxTemplateLen {
		return nil, fmt.Errorf("at most %d characters", MaxTemplateLen)
	}
	var out Template
	var lit strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' {
			if !cacheLiteralChars[c] {
				return nil, fmt.Errorf("holds %s, outside letters, digits and !#%%&()*+,-./:<=>?@[]^_`|~", describeByte(c))
			}
			lit.WriteByte(c)
			i++
			continue
		}
		var name string
		if strings.HasPrefix(s[i:], "${") {
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, errors.New("${ without }")
			}
			name, i = s[i+2:i+end], i+end+1
		} else {
			j := i + 1
			for j < len(s) && templateNameChars[s[j]] {
				j++
			}
			name, i = s[i+1:j], j
		}
		v, ok := CacheVariables.allows(name)
		if !ok {
			return nil, fmt.Errorf("$%s is not a variable allowed here", Truncate(name))
		}
		if lit.Len() > 0 {
			out = append(out, TemplatePart{Literal: lit.String()})
			lit.Reset()
		}
		out = append(out, TemplatePart{Variable: v})
	}
	if lit.Len() > 0 {
		out = append(out, TemplatePart{Literal: lit.String()})
	}
	return out, nil
}

// Validate checks a zone as the renderer needs it.
func (z *CacheZone) Validate() error {
	if !ValidCacheZoneName(z.Name) {
		return fmt.Errorf("cache zone name %q", Truncate(z.Name))
	}
	if z.Size < MinCacheZoneSize || z.Size > MaxCacheZoneSize {
		return fmt.Errorf("cache zone %s: keys zone of %d bytes, want %d to %d", z.Name, z.Size, MinCacheZoneSize, MaxCacheZoneSize)
	}
	if z.Levels != "" && !cacheLevelsSyntax.MatchString(z.Levels) {
		return fmt.Errorf("cache zone %s: levels %q", z.Name, z.Levels)
	}
	if z.MaxSize < 0 || z.MinFree < 0 || z.ManagerFiles < 0 || z.Inactive < 0 || z.ManagerSleep < 0 || z.ManagerThreshold < 0 {
		return fmt.Errorf("cache zone %s: a negative parameter", z.Name)
	}
	return nil
}

// cacheZoneNameSyntax is a zone name as the builder makes them.
var cacheZoneNameSyntax = regexp.MustCompile(`^[a-z][a-zA-Z0-9_]{0,127}$`)

// ValidCacheZoneName reports whether s is a zone name as the builder
// makes them, which nginx reads without quoting.
func ValidCacheZoneName(s string) bool { return cacheZoneNameSyntax.MatchString(s) }

// cacheLevelsSyntax is NGINX Ingress Controller's levels: one to three
// levels of 1 or 2 characters.
var cacheLevelsSyntax = regexp.MustCompile(`^[12](?::[12]){0,2}$`)

// ParseCacheLevels checks a levels value such as 1:2.
func ParseCacheLevels(s string) (string, error) {
	if !cacheLevelsSyntax.MatchString(s) {
		return "", fmt.Errorf("%q: want 1 to 3 levels of 1 or 2, such as 1:2", Truncate(s))
	}
	return s, nil
}
