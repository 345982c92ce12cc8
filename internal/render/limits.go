package render

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// Rate and connection limits (model.Limits).
//
// nginx keeps the counters of limit_req and limit_conn in shared memory
// zones declared at http level, one allocation per zone name. ingress-nginx
// declares 5m zones per Ingress, so memory grows with the number of
// Ingresses. Causeway shares zones instead: one limit_req zone per distinct
// rate ("2r/s", "30r/m") and one limit_conn zone, all keyed by
// $causeway_limit_key, which is the location's scope (a digest of the
// Ingress it came from) followed by the client's binary address. Clients of
// different Ingresses therefore never share a count, the number of zones is
// the number of distinct rates in use, and their total size is bounded by
// limitZonesBudget (see zoneSize).
//
// Zone names depend only on the rate, and every zone has the same key, so a
// reload never meets a zone whose key changed (which nginx refuses); a zone
// whose rate no longer appears is freed when the old workers exit.
//
// A location sets $causeway_limit_scope and $causeway_limit_addr; the latter
// is the client's $binary_remote_addr, or "" for a client of the location's
// exempt list (limit-allowlist), decided by a geo on $remote_addr, which is
// the real client address after the realip module. An empty key is never
// counted by nginx.

// Bounds of the zones: each holds the counters of about size/128 clients;
// when one is full nginx drops the least recently used counters.
const (
	limitZonesBudget = 64 << 20
	maxZoneSize      = 5 << 20 // ingress-nginx's per-zone size
	minZoneSize      = 256 << 10
)

// connZone is the one limit_conn zone.
const connZone = "causeway_conn"

// limitsView is the http level of the limits (templates/nginx.conf.tmpl).
type limitsView struct {
	ReqStatus, ConnStatus int
	Exempt                []exemptView
	// Zones are limit_req_zone arguments after the key: "zone=NAME:SIZE
	// rate=RATE".
	ReqZones []string
	ConnZone string
}

// exemptView is a geo of exempt client addresses.
type exemptView struct {
	ID    string
	CIDRs []string
}

// locationLimits is what a location prints.
type locationLimits struct {
	Scope, Addr string
	// Req are limit_req arguments; Conn is limit_conn's number.
	Req      []string
	Conn     int
	ConnZone string
	// Status, DryRun and LogLevel are the location's own
	// limit_req_status, limit_req_dry_run and limit_req_log_level; zero
	// values inherit.
	Status   int
	DryRun   bool
	LogLevel model.LogLevel
}

// reqZone names the limit_req zone of a rate: n requests per unit ("s" or
// "m"), in a zone of the shared budget or, when size is set, of its own
// size.
func reqZone(n int, unit string, size *model.Size) string {
	name := "causeway_req_" + strconv.Itoa(n) + "r_" + unit
	if size != nil {
		name += "_" + model.FormatSize(int64(*size))
	}
	return name
}

func limitZoneSize(s model.Size) bool {
	return s >= model.MinLimitZoneSize && s <= model.MaxLimitZoneSize
}

// sizedZone is a limit_req zone of a size of its own.
type sizedZone struct {
	rate string
	size model.Size
}

// exemptID names the geo of an exempt list: a digest of its sorted CIDRs.
func exemptID(cidrs []netip.Prefix) (string, []string) {
	s := make([]string, len(cidrs))
	for i, p := range cidrs {
		s[i] = p.String()
	}
	sort.Strings(s)
	s = slices.Compact(s)
	sum := sha256.Sum256([]byte(strings.Join(s, ",")))
	return hex.EncodeToString(sum[:6]), s
}

// limitScope is the prefix of a location's keys: 12 hex digits of the
// digest of the object it came from and, for a Policy's limits, of the
// Policy.
func limitScope(ref, policy model.ObjectRef) string {
	key := ref.Key()
	if policy != (model.ObjectRef{}) {
		key += "\x00" + policy.Key()
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// zoneSize shares limitZonesBudget among n zones, at most maxZoneSize and
// at least minZoneSize each, in whole KiB: the total stays within the
// budget up to limitZonesBudget/minZoneSize zones, that is 256 distinct
// rates.
func zoneSize(n int) int64 {
	size := int64(limitZonesBudget / max(n, 1))
	size = min(max(size, minZoneSize), maxZoneSize)
	return size &^ (1<<10 - 1)
}

// planLimitZones collects the zones and exempt lists every location needs;
// nil when no location has limits.
func planLimitZones(m *model.Model, h *hashStats) *limitsView {
	rates := map[string]string{} // zone name -> rate
	sized := map[string]sizedZone{}
	exempt := map[string][]string{}
	conn := false
	for _, srv := range m.Servers {
		for _, l := range srv.Locations {
			if l.Policy == nil || l.Policy.Limits == nil {
				continue
			}
			lim := l.Policy.Limits
			for _, r := range []struct {
				n    int
				unit string
			}{{lim.RPS, "s"}, {lim.RPM, "m"}} {
				switch rate := strconv.Itoa(r.n) + "r/" + r.unit; {
				case r.n <= 0:
				case lim.ZoneSize != nil:
					// planLimits refuses the location of a size out of
					// bounds, so its zone is not declared.
					if !limitZoneSize(*lim.ZoneSize) {
						continue
					}
					sized[reqZone(r.n, r.unit, lim.ZoneSize)] = sizedZone{rate, *lim.ZoneSize}
				default:
					rates[reqZone(r.n, r.unit, nil)] = rate
				}
			}
			conn = conn || lim.Connections > 0
			if len(lim.Exempt) > 0 && (lim.RPS > 0 || lim.RPM > 0 || lim.Connections > 0) {
				id, cidrs := exemptID(lim.Exempt)
				exempt[id] = cidrs
			}
		}
	}
	if len(rates) == 0 && len(sized) == 0 && !conn {
		return nil
	}
	c := m.Config
	v := &limitsView{ReqStatus: c.LimitReqStatus, ConnStatus: c.LimitConnStatus}
	n := len(rates)
	if conn {
		n++
	}
	size := model.FormatSize(zoneSize(n))
	for _, name := range sortedKeys(rates) {
		v.ReqZones = append(v.ReqZones, fmt.Sprintf("zone=%s:%s rate=%s", name, size, rates[name]))
	}
	for _, name := range sortedKeys(sized) {
		z := sized[name]
		v.ReqZones = append(v.ReqZones, fmt.Sprintf("zone=%s:%s rate=%s", name, model.FormatSize(int64(z.size)), z.rate))
	}
	if conn {
		v.ConnZone = "zone=" + connZone + ":" + size
	}
	for _, id := range sortedKeys(exempt) {
		v.Exempt = append(v.Exempt, exemptView{ID: id, CIDRs: exempt[id]})
		h.mapped("causeway_limit_exempt_"+id, len(exempt[id]))
		h.mapped("causeway_limit_addr_"+id, 2)
	}
	h.mapped("causeway_limit_scope", 0)
	h.mapped("causeway_limit_addr", 0)
	h.mapped("causeway_limit_key", 1)
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// planLimits prints a proxying location's limits.
func planLimits(v *policyView, l *model.Location) error {
	lim := l.Policy.Limits
	for _, n := range []int{lim.RPS, lim.RPM, lim.Connections, lim.BurstRPS, lim.BurstRPM} {
		if n < 0 {
			return fmt.Errorf("negative limit %d", n)
		}
	}
	if lim.RPS > 0 || lim.RPM > 0 || lim.Connections > 0 {
		ll := &locationLimits{Scope: limitScope(l.Source, lim.Policy), Addr: "$binary_remote_addr", Conn: lim.Connections, ConnZone: connZone,
			DryRun: lim.DryRun}
		switch {
		case len(lim.Key) > 0 && len(lim.Exempt) > 0:
			return errors.New("a limit key and an exempt list together")
		case len(lim.Key) > 0:
			key, err := quoteTemplate(lim.Key)
			if err != nil {
				return fmt.Errorf("limit key: %w", err)
			}
			ll.Addr = key
		case len(lim.Exempt) > 0:
			id, _ := exemptID(lim.Exempt)
			ll.Addr = "$causeway_limit_addr_" + id
		}
		if c := lim.RejectCode; c != 0 && (c < 400 || c > 599) {
			return fmt.Errorf("limit reject code %d", c)
		}
		ll.Status = lim.RejectCode
		if lim.LogLevel != "" && !slices.Contains(model.LimitLogLevels, lim.LogLevel) {
			return fmt.Errorf("limit log level %q", lim.LogLevel)
		}
		ll.LogLevel = lim.LogLevel
		if lim.ZoneSize != nil && !limitZoneSize(*lim.ZoneSize) {
			return fmt.Errorf("limit zone size %d out of bounds", *lim.ZoneSize)
		}
		if lim.Pacing.Delay < 0 {
			return fmt.Errorf("negative limit delay %d", lim.Pacing.Delay)
		}
		if lim.RPS > 0 {
			ll.Req = append(ll.Req, limitReq(reqZone(lim.RPS, "s", lim.ZoneSize), lim.BurstRPS, lim.Pacing))
		}
		if lim.RPM > 0 {
			ll.Req = append(ll.Req, limitReq(reqZone(lim.RPM, "m", lim.ZoneSize), lim.BurstRPM, lim.Pacing))
		}
		v.Limits = ll
	}
	for _, s := range []struct {
		in  *model.Size
		out *string
	}{{lim.Rate, &v.LimitRate}, {lim.RateAfter, &v.LimitRateAfter}} {
		if s.in == nil {
			continue
		}
		if *s.in < 0 {
			return fmt.Errorf("negative size %d", *s.in)
		}
		*s.out = model.FormatSize(int64(*s.in))
	}
	return nil
}

// limitReq is a limit_req's arguments: the zone, the burst when there is
// one (nginx refuses burst=0), then nodelay (requests within the burst
// served at once, as ingress-nginx does) or, when they are spaced to the
// rate, delay= for the first ones served at once.
func limitReq(zone string, burst int, p model.BurstPacing) string {
	out := "zone=" + zone
	if burst > 0 {
		out += " burst=" + strconv.Itoa(burst)
	}
	switch {
	case !p.Spaced:
		out += " nodelay"
	case p.Delay > 0 && burst > 0:
		out += " delay=" + strconv.Itoa(p.Delay)
	}
	return out
}
