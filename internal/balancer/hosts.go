package balancer

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Host is a host added since the last reload, served by the hop server of its shape.
//
// nginx picks a server block by server_name, fixed at the last reload. A
// host of a shape nginx already serves reaches it without one: the
// catch-all and wildcard servers look the request's $host up in the hosts
// table (causeway.hosts) and hand it to the shape's hop server over a
// unix socket, which takes the per-host values its maps cannot know (Vars)
// from the table. By SNI, the same servers serve the host's certificate
// (Cert).
type Host struct {
	Name  string            `json:"name"`           // exact lowercase DNS name, no wildcard, <=253
	Shape string            `json:"shape"`          // 12 lowercase hex digits
	Hop   string            `json:"hop"`            // absolute path of the hop server's unix socket, [A-Za-z0-9._/-], ends ".sock"
	Cert  string            `json:"cert,omitempty"` // absolute path of the PEM (cert+key) to serve by SNI, "" = the server's own
	Vars  map[string]string `json:"vars"`           // variable name (without $) -> value
}

// Limits of the hosts table, twins of the MAX_HOST* constants of
// validate.lua (in luaLimits, which TestLimitsMatchLua compares).
const (
	// MaxHosts is the number of hosts in one table.
	MaxHosts = 100000
	// MaxHostNameLen is a host name's length (a DNS name's).
	MaxHostNameLen = 253
	// MaxHostHopLen is a hop socket path's length: a unix socket path
	// holds at most 107 bytes (sun_path, NUL included, is 108).
	MaxHostHopLen = 107
	// MaxHostCertLen is a certificate path's length (PATH_MAX less NUL).
	MaxHostCertLen = 4095
	// MaxHostValueLen is a variable value's length.
	MaxHostValueLen = 1024
)

var (
	shapeRe   = regexp.MustCompile(`^[0-9a-f]{12}$`)
	hopRe     = regexp.MustCompile(`^/[A-Za-z0-9._/-]*\.sock$`)
	certRe    = regexp.MustCompile(`^/[A-Za-z0-9._/-]+$`)
	hostVarRe = regexp.MustCompile(`^causeway_(route|log)_[0-9a-f]{12}_[0-9]+$`)
)

// Validate applies the checks validate.lua applies to one entry, so that
// the controller can leave out (and report) one bad host instead of
// having the whole table refused.
func (h *Host) Validate() error {
	if strings.Contains(h.Name, "*") {
		return fmt.Errorf("host %q: name must be an exact host, not a wildcard", model.Truncate(h.Name))
	}
	if err := model.ValidateHost(h.Name); err != nil {
		return err
	}
	if !shapeRe.MatchString(h.Shape) {
		return fmt.Errorf("host %s: shape %q must be 12 lower-case hex digits", h.Name, model.Truncate(h.Shape))
	}
	if len(h.Hop) > MaxHostHopLen || !hopRe.MatchString(h.Hop) {
		return fmt.Errorf("host %s: hop %q must be an absolute path of [A-Za-z0-9._/-] ending in .sock, at most %d bytes",
			h.Name, model.Truncate(h.Hop), MaxHostHopLen)
	}
	if h.Cert != "" && (len(h.Cert) > MaxHostCertLen || !certRe.MatchString(h.Cert)) {
		return fmt.Errorf("host %s: cert %q must be an absolute path of [A-Za-z0-9._/-], at most %d bytes",
			h.Name, model.Truncate(h.Cert), MaxHostCertLen)
	}
	for name, value := range h.Vars {
		if !hostVarRe.MatchString(name) {
			return fmt.Errorf("host %s: variable %q must be causeway_route_<id>_<n> or causeway_log_<id>_<n>",
				h.Name, model.Truncate(name))
		}
		if !validHostValue(value) {
			return fmt.Errorf("host %s: value of %s must be at most %d printable ASCII characters other than \" \\ and $, got %q",
				h.Name, name, MaxHostValueLen, model.Truncate(value))
		}
	}
	return nil
}

// validHostValue: a plain nginx map value, which needs no quoting
// beyond double quotes and holds no variable.
func validHostValue(v string) bool {
	if len(v) > MaxHostValueLen { // "" too: a map's value may be empty
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '$' {
			return false
		}
	}
	return true
}

// ValidateHosts checks a whole hosts table as the Lua side does: every
// entry, unique names and at most MaxHosts entries.
func ValidateHosts(hs []Host) error {
	if len(hs) > MaxHosts {
		return &LimitError{What: "hosts", Got: len(hs), Limit: MaxHosts}
	}
	seen := make(map[string]int, len(hs))
	for i := range hs {
		h := &hs[i]
		if err := h.Validate(); err != nil {
			return fmt.Errorf("hosts[%d]: %w", i, err)
		}
		if j, dup := seen[h.Name]; dup {
			return fmt.Errorf("hosts[%d]: host %s duplicates hosts[%d]", i, h.Name, j)
		}
		seen[h.Name] = i
	}
	return nil
}

// wire returns h as sent: nil Vars become {} because the Lua side
// (rightly) refuses null.
func (h Host) wire() Host {
	if h.Vars == nil {
		h.Vars = map[string]string{}
	}
	return h
}

// wireHosts returns hs as sent; nil stays nil (omitted from a state).
func wireHosts(hs []Host) []Host {
	if hs == nil {
		return nil
	}
	out := make([]Host, len(hs))
	for i, h := range hs {
		out[i] = h.wire()
	}
	return out
}

// stateHostsPayload is a full state with its hosts table, left out when
// empty (the Lua side reads absent as empty).
type stateHostsPayload struct {
	statePayload
	Hosts []Host `json:"hosts,omitempty"`
}

// hostsPayload is the body of PUT /v1/hosts (Client.ReplaceHosts).
type hostsPayload struct {
	Hosts []Host `json:"hosts"`
}
