package annotations

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// NGINX Ingress Controller's own Ingress annotations (nginx.org/), which
// its users and ANIC's put on their Ingresses. Each is a second spelling
// of a setting the ingress-nginx annotations (or a VirtualServer) already
// make: the parsers below read NIC's grammar into the same model values.
// When an Ingress sets both spellings of one setting, the ingress-nginx
// annotation wins and the nginx.org one is reported.

// NICPrefix is NGINX Ingress Controller's annotation prefix.
const NICPrefix = "nginx.org"

// FamilyNIC annotations use nginx.org/.
const FamilyNIC AnnotationFamily = "nginx-ingress-controller"

// The values of nginx.org/mergeable-ingress-type.
const (
	MergeableMaster = "master"
	MergeableMinion = "minion"
)

// nicRow is a supported nginx.org annotation: same names the ingress-nginx
// annotations that set the same value ("" for none).
func nicRow(group string, scope Scope, name, same, def, grammar, difference string) Annotation {
	return Annotation{Family: FamilyNIC, Kind: "Ingress", Group: group, Status: AnnotationSupported, Name: name, Scope: scope,
		SameAs: same, Default: def, Grammar: grammar, Difference: difference}
}

const (
	nicServiceList = "a comma-separated list of Service names the Ingress's paths route to"
	nicBool        = "a boolean: true, false, 1, 0, t, f (any case)"
	nicTime        = "a duration with one unit ms, s, m or h (or bare seconds) from 1ms to 24h, such as 60s or 1m"
)

// nicSupported are the nginx.org annotations Causeway serves.
var nicSupported = []Annotation{
	nicRow("proxy", ScopeLocation, "proxy-connect-timeout", "proxy-connect-timeout", "the ConfigMap's proxy-connect-timeout", nicTime,
		"NIC's combined units (1m30s) are refused"),
	nicRow("proxy", ScopeLocation, "proxy-read-timeout", "proxy-read-timeout", "the ConfigMap's proxy-read-timeout", nicTime,
		"NIC's combined units (1m30s) are refused"),
	nicRow("proxy", ScopeLocation, "proxy-send-timeout", "proxy-send-timeout", "the ConfigMap's proxy-send-timeout", nicTime,
		"NIC's combined units (1m30s) are refused"),
	nicRow("proxy", ScopeLocation, "client-max-body-size", "proxy-body-size", "the ConfigMap's proxy-body-size", sizeGrammar+"; 0 means unlimited", ""),
	nicRow("proxy", ScopeLocation, "proxy-buffering", "proxy-buffering", "the ConfigMap's proxy-buffering", nicBool,
		"Causeway's default is off, ingress-nginx's; NIC's is on"),
	nicRow("backend", ScopeBackend, "ssl-services", "backend-protocol", "HTTP", nicServiceList+"; their paths speak HTTPS to the Service", ""),
	nicRow("backend", ScopeBackend, "grpc-services", "backend-protocol", "HTTP", nicServiceList+"; their paths speak gRPC (gRPC over TLS with ssl-services too)",
		"as in NIC, gRPC needs HTTP/2 from the client"),
	nicRow("backend", ScopeBackend, "websocket-services", "", "every path passes WebSocket upgrades", nicServiceList,
		"accepted and checked: Causeway passes the Upgrade and Connection headers on every path, so it changes nothing"),
	nicRow("rewrite", ScopeBackend, "rewrites", "rewrite-target", "no rewrite",
		"serviceName=NAME rewrite=PATH entries separated by ;: the paths routing to NAME replace their path with PATH and keep the rest, "+
			"as NIC's proxy_pass with a URI does; PATH is a path without ? or $",
		"a quoted rewrite (rewrite=\"/x\") is refused"),
	nicRow("balance", ScopeBackend, "lb-method", "load-balance", "the ConfigMap's load-balance",
		`round_robin, least_conn, ip_hash, "random two", "random two least_conn" or "hash KEY [consistent]", as a VirtualServer upstream's lb-method`,
		"random alone and NGINX Plus's methods are refused"),
	nicRow("balance", ScopeBackend, "max-fails", "", "0: endpoints are never taken out (NIC's 1 applies once fail-timeout is set)",
		"a whole number from 0, as a VirtualServer upstream's max-fails", "as a VirtualServer upstream's"),
	nicRow("balance", ScopeBackend, "fail-timeout", "", "10s once max-fails is set",
		"whole seconds (such as 10 or 10s) up to a day, as a VirtualServer upstream's fail-timeout", "as a VirtualServer upstream's"),
	nicRow("redirect", ScopeServer, "redirect-to-https", "force-ssl-redirect", "false",
		nicBool+"; requests whose X-Forwarded-Proto header is http are redirected (301) to https:// with the host and URI as sent",
		"as a VirtualServer's tls.redirect with basedOn: x-forwarded-proto"),
	nicRow("server", ScopeServer, "hsts", "", "the ConfigMap's hsts", nicBool+"; sends Strict-Transport-Security on HTTPS responses",
		"as a VirtualServer's hsts Policy"),
	nicRow("server", ScopeServer, "hsts-max-age", "", "2592000 (NIC's)", "whole seconds from 0 to 2147483647; with hsts", ""),
	nicRow("server", ScopeServer, "hsts-include-subdomains", "", "false", nicBool+"; with hsts", ""),
	nicRow("server", ScopeServer, "hsts-behind-proxy", "", "false", nicBool+"; with hsts: sent when X-Forwarded-Proto is https instead of on TLS", ""),
	nicRow("server", ScopeServer, "server-tokens", "", "the ConfigMap's server-tokens", nicBool+"; sends nginx's version in the Server header and error pages",
		"true is ignored (reported) while the ConfigMap's server-tokens is false, which removes the Server header on every host; "+
			"false then sends no Server header at all (NIC sends \"nginx\")"),
	nicRow("mergeable", ScopeServer, "mergeable-ingress-type", "", "not mergeable",
		"master (the host, its TLS and server settings, no paths) or minion (paths of the master's host, location settings only)",
		"see docs/annotations.md, Mergeable Ingresses"),
}

// nicNotYet are the nginx.org annotations Causeway reports and ignores,
// and nicFailClosed those that protect paths: until implemented, every
// path of an Ingress carrying one answers 503.
var (
	nicNotYet = []string{"add-header", "add-header-inherit", "app-root", "client-body-buffer-size", "custom-http-errors",
		"http-redirect-code", "keepalive", "limit-req-burst", "limit-req-delay", "limit-req-dry-run", "limit-req-key",
		"limit-req-log-level", "limit-req-no-delay", "limit-req-rate", "limit-req-reject-code", "limit-req-scale",
		"limit-req-zone-size", "listen-ports", "listen-ports-ssl", "location-snippets", "max-conns", "path-regex",
		"proxy-buffer-size", "proxy-buffers", "proxy-busy-buffers-size", "proxy-hide-headers", "proxy-max-temp-file-size",
		"proxy-next-upstream", "proxy-next-upstream-timeout", "proxy-next-upstream-tries", "proxy-pass-headers",
		"proxy-redirect-from", "proxy-redirect-to", "proxy-set-headers", "rewrite-target", "server-snippets", "slow-start",
		"ssl-ciphers", "ssl-prefer-server-ciphers", "ssl-redirect", "sticky-cookie-services", "upstream-zone-size", "use-cluster-ip"}
	nicFailClosed = []string{"basic-auth-secret", "basic-auth-realm", "policies"}
)

// NGINX Plus's Ingress annotations (nginx.com/), which NIC reads only with
// NGINX Plus. Causeway has none of them; they are reported, and the JWT
// ones, which protect paths, close every path of the Ingress.
const (
	NICPlusPrefix                  = "nginx.com"
	FamilyNICPlus AnnotationFamily = "nginx-plus"
)

// nicPlusRows are every nginx.com row of the registry.
var nicPlusRows = concat(
	nicPlus(AnnotationNotYetSupported, "health", "active health checks need NGINX Plus; the Lua balancer's passive checks "+
		"(max-fails, fail-timeout) take endpoints out", "health-checks", "health-checks-mandatory", "health-checks-mandatory-queue"),
	nicPlus(AnnotationNotYetSupported, "balance", "needs NGINX Plus", "slow-start"),
	nicPlus(AnnotationNotYetSupported, "balance", "NGINX Plus's sticky cookie: use the affinity annotations (affinity: cookie)", "sticky-cookie-services"),
	nicPlus(AnnotationFailClosed, "auth", "JWT validation needs NGINX Plus", "jwt-key", "jwt-realm", "jwt-token", "jwt-login-url"),
)

func nicPlus(st AnnotationStatus, group, instead string, names ...string) []Annotation {
	out := rows(FamilyNICPlus, "Ingress", group, st, names...)
	for i := range out {
		out[i].Instead = instead
	}
	return out
}

// nicRows are every nginx.org row of the registry.
var nicRows = concat(nicSupported, rows(FamilyNIC, "Ingress", "nginx.org", AnnotationNotYetSupported, nicNotYet...),
	rows(FamilyNIC, "Ingress", "auth", AnnotationFailClosed, nicFailClosed...))

// NIC's rules for mergeable Ingresses: what a master may not carry (it
// has no paths), what a minion may not (it has no host of its own), and
// what a minion inherits from its master unless it sets it.
var (
	nicMasterDeny  = []string{"rewrites", "ssl-services", "grpc-services", "websocket-services", "use-cluster-ip", "sticky-cookie-services"}
	nicMinionDeny  = []string{"proxy-hide-headers", "proxy-pass-headers", "redirect-to-https", "ssl-redirect", "http-redirect-code", "hsts", "hsts-max-age", "hsts-include-subdomains", "hsts-behind-proxy", "server-tokens", "listen-ports", "listen-ports-ssl", "server-snippets", "ssl-ciphers", "ssl-prefer-server-ciphers", "app-root"}
	nicInheritable = []string{"proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout", "client-max-body-size", "proxy-buffering", "proxy-buffers", "proxy-buffer-size", "proxy-busy-buffers-size", "proxy-max-temp-file-size", "upstream-zone-size", "location-snippets", "lb-method", "keepalive", "max-fails", "max-conns", "fail-timeout", "limit-req-rate", "limit-req-key", "limit-req-zone-size", "limit-req-delay", "limit-req-no-delay", "limit-req-burst", "limit-req-dry-run", "limit-req-log-level", "limit-req-reject-code", "limit-req-scale"}
)

// Inherit returns a minion's annotations with those of its master that a
// minion inherits (NIC's list) and does not set itself.
func Inherit(minion, master map[string]string) map[string]string {
	out := make(map[string]string, len(minion))
	for k, v := range minion {
		out[k] = v
	}
	for _, n := range nicInheritable {
		k := NICPrefix + "/" + n
		if v, ok := master[k]; ok {
			if _, own := out[k]; !own {
				out[k] = v
			}
		}
	}
	return out
}

// MergeableType returns an Ingress's nginx.org/mergeable-ingress-type:
// master, minion, or "" (with an error for any other value).
func MergeableType(annotations map[string]string) (string, error) {
	v, ok := annotations[NICPrefix+"/mergeable-ingress-type"]
	switch {
	case !ok:
		return "", nil
	case v == MergeableMaster || v == MergeableMinion:
		return v, nil
	}
	return "", fmt.Errorf("annotation %s/mergeable-ingress-type: value %q: want master or minion", NICPrefix, model.Truncate(v))
}

// ServicePolicy is what the nginx.org per-Service annotations add to the
// paths of an Ingress that route to one Service.
type ServicePolicy struct {
	Protocol model.BackendProtocol
	Rewrite  *model.Rewrite
}

// parseNIC reads the nginx.org annotations (nr) of an Ingress whose
// ingress-nginx annotations r holds: NIC's rules for masters and minions
// first, then each setting, unless the ingress-nginx annotation of the
// same setting is set, which wins.
func parseNIC(r, nr *Reader, res *Result) {
	mergeable, _ := MergeableType(prefixed(nr))
	for n := range nr.values {
		switch {
		case mergeable == MergeableMaster && slices.Contains(nicMasterDeny, n):
			nr.Ignored(n, "is not allowed on a master Ingress (mergeable-ingress-type: master), as in NIC")
			delete(nr.values, n)
		case mergeable == MergeableMinion && slices.Contains(nicMinionDeny, n):
			nr.Ignored(n, "is not allowed on a minion Ingress (mergeable-ingress-type: minion), as in NIC: the master sets it for the host")
			delete(nr.values, n)
		}
	}
	for _, a := range nicSupported {
		if a.SameAs != "" && nr.Has(a.Name) && r.Has(a.SameAs) {
			nr.Ignored(a.Name, fmt.Sprintf("sets what %s sets, which this Ingress sets too and which wins", r.Key(a.SameAs)))
			delete(nr.values, a.Name)
		}
	}
	p := &res.Location
	Set(nr, "proxy-connect-timeout", &p.Timeouts.Connect, model.ParseTimeout)
	Set(nr, "proxy-read-timeout", &p.Timeouts.Read, model.ParseTimeout)
	Set(nr, "proxy-send-timeout", &p.Timeouts.Send, model.ParseTimeout)
	SetPtr(nr, "client-max-body-size", &p.Buffering.BodySize, parseSize(0, -1))
	if v, ok := Parse(nr, "proxy-buffering", model.ParseBool); ok {
		p.Buffering.Response = &v
	}
	parseNICServices(nr, res)
	parseNICUpstream(nr, res)
	parseNICServer(nr, res)
}

// prefixed returns the reader's values under their full keys.
func prefixed(r *Reader) map[string]string {
	out := make(map[string]string, len(r.values))
	for n, v := range r.values {
		out[r.Key(n)] = v
	}
	return out
}

// parseServiceList reads a comma-separated list of Service names.
func parseServiceList(s string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if err := model.ValidateServiceName(n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("want one or more Service names separated by commas")
	}
	return out, nil
}

// parseNICServices reads ssl-services, grpc-services, websocket-services
// and rewrites into res.Services.
func parseNICServices(r *Reader, res *Result) {
	svc := func(name string) *ServicePolicy {
		if res.Services == nil {
			res.Services = map[string]*ServicePolicy{}
		}
		if res.Services[name] == nil {
			res.Services[name] = &ServicePolicy{}
		}
		return res.Services[name]
	}
	ssl, _ := Parse(r, "ssl-services", parseServiceList)
	grpc, _ := Parse(r, "grpc-services", parseServiceList)
	for _, n := range ssl {
		svc(n).Protocol = model.ProtocolHTTPS
	}
	for _, n := range grpc {
		if slices.Contains(ssl, n) {
			svc(n).Protocol = model.ProtocolGRPCS
		} else {
			svc(n).Protocol = model.ProtocolGRPC
		}
	}
	Parse(r, "websocket-services", parseServiceList)
	if rw, ok := Parse(r, "rewrites", parseRewrites); ok {
		for n, target := range rw {
			svc(n).Rewrite = &model.Rewrite{Target: target, Prefix: true}
		}
	}
}

// parseRewrites reads "serviceName=NAME rewrite=PATH;...": a path per
// Service, without ? or $ (it replaces the location's path).
func parseRewrites(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, entry := range strings.Split(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		f := strings.Fields(entry)
		name, okName := strings.CutPrefix(f[0], "serviceName=")
		if len(f) != 2 || !okName {
			return nil, fmt.Errorf("entry %q: want serviceName=NAME rewrite=PATH", model.Truncate(entry))
		}
		path, okPath := strings.CutPrefix(f[1], "rewrite=")
		if !okPath {
			return nil, fmt.Errorf("entry %q: want serviceName=NAME rewrite=PATH", model.Truncate(entry))
		}
		if err := model.ValidateServiceName(name); err != nil {
			return nil, err
		}
		if strings.ContainsAny(path, "?$\"'") {
			return nil, fmt.Errorf("rewrite %q: want a path without ?, $ or quotes", model.Truncate(path))
		}
		target, err := model.ParseRewriteTarget(path, 0)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("service %s is rewritten twice", name)
		}
		out[name] = target
	}
	if len(out) == 0 {
		return nil, errors.New("want serviceName=NAME rewrite=PATH entries separated by ;")
	}
	return out, nil
}

// parseNICUpstream reads lb-method, max-fails and fail-timeout with a
// VirtualServer upstream's parsers.
func parseNICUpstream(r *Reader, res *Result) {
	if v, ok := r.Get("lb-method"); ok {
		if b, err := nic.ParseLBMethod(v); res.Balance != nil {
			r.Ignored("lb-method", "sets the balancing, which this Ingress's "+strings.Join(res.Balance.Keys, ", ")+" set too and which wins")
		} else if err != nil {
			r.Invalid("lb-method", v, err)
		} else {
			res.Balance = &BalanceSettings{Method: b.Method, HashKey: b.HashKey, Keys: []string{r.Key("lb-method")}}
		}
	}
	if !r.Has("max-fails") && !r.Has("fail-timeout") {
		return
	}
	maxFails, _ := r.Get("max-fails")
	failTimeout, _ := r.Get("fail-timeout")
	l, problems := nic.ParsePeerLimits(maxFails, failTimeout)
	for _, p := range problems {
		r.Invalid(p.Name, p.Value, p.Err)
	}
	res.PeerLimits = l
}

// parseNICServer reads the host-level nginx.org annotations.
func parseNICServer(r *Reader, res *Result) {
	s := &res.Server
	if v, ok := Parse(r, "redirect-to-https", model.ParseBool); ok && v {
		s.HTTPSRedirect = &model.HTTPSRedirect{Code: 301, BasedOn: model.RedirectOnForwardedProto}
		r.setKeys(&s.Keys, "redirect-to-https")
	}
	if v, ok := Parse(r, "server-tokens", model.ParseBool); ok {
		s.ServerTokens = &v
		r.setKeys(&s.Keys, "server-tokens")
	}
	on, set := Parse(r, "hsts", model.ParseBool)
	if !set {
		for _, n := range []string{"hsts-max-age", "hsts-include-subdomains", "hsts-behind-proxy"} {
			if r.Has(n) {
				r.Ignored(n, "only applies with "+r.Key("hsts"))
			}
		}
		return
	}
	h := &model.ServerHSTS{HSTS: model.HSTS{Enabled: on, MaxAge: nicHSTSMaxAge}}
	if on {
		if n, ok := Parse(r, "hsts-max-age", func(s string) (int, error) { return parseInt(s, 0, 1<<31-1) }); ok {
			h.MaxAge = int64(n)
		}
		if v, ok := Parse(r, "hsts-include-subdomains", model.ParseBool); ok {
			h.IncludeSubdomains = v
		}
		if v, ok := Parse(r, "hsts-behind-proxy", model.ParseBool); ok {
			h.BehindProxy = v
		}
	}
	s.HSTS = h
	r.setKeys(&s.Keys, "hsts")
}

// nicHSTSMaxAge is NGINX Ingress Controller's default max-age.
const nicHSTSMaxAge = 2592000

// ignoredOnCanaryNIC reports the supported nginx.org annotations of a
// canary, which borrows its main Ingress's locations.
func ignoredOnCanaryNIC(r *Reader) {
	for _, a := range nicSupported {
		if r.Has(a.Name) {
			r.Ignored(a.Name, "has no effect on a canary Ingress")
		}
	}
}
