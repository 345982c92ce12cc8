package spec

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Rate and connection limits, as data. A row sends Count requests from one
// client address: back to back (rates), or all at once with the backend
// holding each (connections). The build tests check Served and Refused on
// the Model with EvalLimits; the integration tests send the requests to a
// real nginx, where time passes between requests: see Tolerance.

// LimitCase is one row.
type LimitCase struct {
	Name      string
	Ingresses []Ingress
	// Config are keys of the controller's ConfigMap; rows with the same
	// Config are served by one controller.
	Config map[string]string
	// From is the client's address, in 127.0.0.0/8.
	From string
	// Path is requested on the Ingress's host.
	Path  string
	Count int
	// Concurrent sends the requests at once, each held by the backend
	// (connections); otherwise they are sent one after the other.
	Concurrent bool
	// Served are answered 200 by the backend, the first ones when sent
	// back to back; the others are answered Refused.
	Served, Refused int
}

// Tolerance is how many more than Served a real nginx may serve to a row
// sent back to back over elapsed seconds: the rate refills the count while
// the requests are sent (perSecond, from the row's annotations), plus one
// for a refill that lands between two requests.
func (c LimitCase) Tolerance(elapsedSeconds float64) int {
	return int(c.perSecond()*elapsedSeconds) + 1
}

func (c LimitCase) perSecond() float64 {
	a := c.Ingresses[0].Annotations
	rate := 0.0
	for name, per := range map[string]float64{"limit-rps": 1, "limit-rpm": 60} {
		n, _ := strconv.Atoi(a[name])
		if r := float64(n) / per; n > 0 && (rate == 0 || r < rate) {
			rate = r
		}
	}
	return rate
}

// Host is the row's host.
func (c LimitCase) Host() string { return c.Ingresses[0].Host }

// AsAnnotationCase is the row as a set of objects to build or serve.
func (c LimitCase) AsAnnotationCase() AnnotationCase {
	return AnnotationCase{Name: c.Name, Ingresses: c.Ingresses, Config: c.Config}
}

// LimitTable is one row per limit behaviour.
var LimitTable = []LimitCase{
	{Name: "limit-rps with burst multiplier 1 serves the rate and its burst, then refuses with 503",
		Ingresses: one("rps.test", "/", "Prefix", "app", ann("limit-rps", "2", "limit-burst-multiplier", "1")),
		From:      "127.0.0.11", Path: "/", Count: 8, Served: 3, Refused: 503},
	{Name: "limit-rps with the default multiplier 5",
		Ingresses: one("rps5.test", "/", "Prefix", "app", ann("limit-rps", "1")),
		From:      "127.0.0.12", Path: "/", Count: 10, Served: 6, Refused: 503},
	{Name: "limit-rpm counts per minute",
		Ingresses: one("rpm.test", "/", "Prefix", "app", ann("limit-rpm", "2", "limit-burst-multiplier", "1")),
		From:      "127.0.0.13", Path: "/", Count: 6, Served: 3, Refused: 503},
	{Name: "limit-req-status-code answers refused requests",
		Ingresses: one("rps429.test", "/", "Prefix", "app", ann("limit-rps", "2", "limit-burst-multiplier", "1")),
		Config:    map[string]string{"limit-req-status-code": "429"},
		From:      "127.0.0.14", Path: "/", Count: 8, Served: 3, Refused: 429},
	{Name: "limit-allowlist: an exempt client is never limited",
		Ingresses: one("allow.test", "/", "Prefix", "app", ann("limit-rps", "1", "limit-burst-multiplier", "1", "limit-allowlist", "127.0.0.15/32, 10.0.0.0/8")),
		From:      "127.0.0.15", Path: "/", Count: 8, Served: 8},
	{Name: "limit-allowlist: other clients are limited",
		Ingresses: one("allow.test", "/", "Prefix", "app", ann("limit-rps", "1", "limit-burst-multiplier", "1", "limit-allowlist", "127.0.0.15/32, 10.0.0.0/8")),
		From:      "127.0.0.16", Path: "/", Count: 8, Served: 2, Refused: 503},
	{Name: "limit-whitelist, the former name, exempts too",
		Ingresses: one("white.test", "/", "Prefix", "app", ann("limit-rps", "1", "limit-burst-multiplier", "1", "limit-whitelist", "127.0.0.17")),
		From:      "127.0.0.17", Path: "/", Count: 8, Served: 8},
	{Name: "limit-connections refuses requests over the number in progress",
		Ingresses: one("conn.test", "/", "Prefix", "app", ann("limit-connections", "2")),
		From:      "127.0.0.18", Path: "/?sleep=1500ms", Count: 5, Concurrent: true, Served: 2, Refused: 503},
	{Name: "limit-conn-status-code answers refused connections",
		Ingresses: one("conn429.test", "/", "Prefix", "app", ann("limit-connections", "1")),
		Config:    map[string]string{"limit-conn-status-code": "429"},
		From:      "127.0.0.19", Path: "/?sleep=1500ms", Count: 3, Concurrent: true, Served: 1, Refused: 429},
	{Name: "limit-connections: an allowlisted client is never limited",
		Ingresses: one("connallow.test", "/", "Prefix", "app", ann("limit-connections", "1", "limit-allowlist", "127.0.0.20")),
		From:      "127.0.0.20", Path: "/?sleep=1500ms", Count: 3, Concurrent: true, Served: 3},
}

// EvalLimits answers a row from the Model alone: how many of its requests
// are served and the status of the others. nginx's limit_req with nodelay
// serves 1 + burst requests arriving at once; limit_conn serves as many
// as the limit at once. A client in the exempt list is never counted.
func EvalLimits(m *model.Model, c LimitCase) (served, refused int) {
	srv, _ := selectServer(m, strings.ToLower(c.Host()))
	path, _, _ := strings.Cut(c.Path, "?")
	loc := srv.Match(path)
	if loc == nil || loc.Policy == nil || loc.Policy.Limits == nil {
		return c.Count, 0
	}
	lim := loc.Policy.Limits
	from := netip.MustParseAddr(c.From)
	for _, p := range lim.Exempt {
		if p.Contains(from) {
			return c.Count, 0
		}
	}
	served, refused = c.Count, 0
	if c.Concurrent {
		if lim.Connections > 0 && lim.Connections < c.Count {
			served, refused = lim.Connections, m.Config.LimitConnStatus
		}
		return served, refused
	}
	for _, r := range []struct{ rate, burst int }{{lim.RPS, lim.BurstRPS}, {lim.RPM, lim.BurstRPM}} {
		if r.rate > 0 && r.burst+1 < served {
			served, refused = r.burst+1, m.Config.LimitReqStatus
		}
	}
	return served, refused
}
