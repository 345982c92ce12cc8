package render

import (
	"crypto/sha256"
	"encoding/hex"
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
}

// reqZone names the limit_req zone of a rate: n requests per unit ("s" or
// "m").
func reqZone(n int, unit string) string {
	return "causeway_req_" + strconv.Itoa(n) + "r_" + unit
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
// digest of the object it came from.
func limitScope(ref model.ObjectRef) string {
	sum := sha256.Sum256([]byte(ref.Key()))
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
	exempt := map[string][]string{}
	conn := false
	for _, srv := range m.Servers {
		for _, l := range srv.Locations {
			if l.Policy == nil || l.Policy.Limits == nil {
				continue
			}
			lim := l.Policy.Limits
			if lim.RPS > 0 {
				rates[reqZone(lim.RPS, "s")] = strconv.Itoa(lim.RPS) + "r/s"
			}
			if lim.RPM > 0 {
				rates[reqZone(lim.RPM, "m")] = strconv.Itoa(lim.RPM) + "r/m"
			}
			conn = conn || lim.Connections > 0
			if len(lim.Exempt) > 0 && (lim.RPS > 0 || lim.RPM > 0 || lim.Connections > 0) {
				id, cidrs := exemptID(lim.Exempt)
				exempt[id] = cidrs
			}
		}
	}
	if len(rates) == 0 && !conn {
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
		ll := &locationLimits{Scope: limitScope(l.Source), Addr: "$binary_remote_addr", Conn: lim.Connections, ConnZone: connZone}
		if len(lim.Exempt) > 0 {
			id, _ := exemptID(lim.Exempt)
			ll.Addr = "$causeway_limit_addr_" + id
		}
		// nodelay: requests within the burst are served at once, not
		// spaced out to the rate, as ingress-nginx does.
		// nginx refuses burst=0: without a burst, none is printed.
		if lim.RPS > 0 {
			ll.Req = append(ll.Req, limitReq(reqZone(lim.RPS, "s"), lim.BurstRPS))
		}
		if lim.RPM > 0 {
			ll.Req = append(ll.Req, limitReq(reqZone(lim.RPM, "m"), lim.BurstRPM))
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
// one, nodelay.
func limitReq(zone string, burst int) string {
	if burst == 0 {
		return "zone=" + zone + " nodelay"
	}
	return fmt.Sprintf("zone=%s burst=%d nodelay", zone, burst)
}
