package nic

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// Policy is one Policy in the model's terms: exactly one of its fields is
// set, as a Policy holds exactly one kind. The values are the same model
// values the Ingress annotations produce (one implementation per feature).
type Policy struct {
	Ref model.ObjectRef
	// Kind is the policy's kind as written ("accessControl", ...); a
	// route applies at most one Policy of each kind.
	Kind string
	// Access is accessControl.
	Access *model.AccessList
	// BasicAuth is basicAuth.
	BasicAuth *BasicAuth
	// Limits is rateLimit.
	Limits *model.Limits
	// IngressMTLS is ingressMTLS: server level, from a VirtualServer's
	// own policies only.
	IngressMTLS *IngressMTLS
	// EgressMTLS is egressMTLS.
	EgressMTLS *EgressMTLS
	// ExternalAuth is externalAuth (policy_auth.go).
	ExternalAuth *ExternalAuth
	// APIKey is apiKey (policy_apikey.go).
	APIKey *APIKey
	// CORS is cors (policy_headers.go).
	CORS *model.CORS
	// HSTS is hsts: server level, from a VirtualServer's own policies
	// only.
	HSTS *model.ServerHSTS
	// Cache is cache (policy_cache.go).
	Cache *Cache
}

// BasicAuth is a basicAuth policy: the users of a Secret of type
// nginx.org/htpasswd (key htpasswd) in the Policy's namespace.
type BasicAuth struct {
	Secret string
	// Realm is a validated realm.
	Realm string
}

// PolicyRef names a Policy.
func PolicyRef(p *nicv1.Policy) model.ObjectRef {
	return model.ObjectRef{Kind: "Policy", Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)}
}

// maxAccessEntries bounds an accessControl list.
const maxAccessEntries = 1000

// TranslatePolicy checks a Policy. An error makes it invalid: the routes
// that reference it answer 500, as NGINX Ingress Controller's do. Problems
// report fields that are not used.
//
// replicas is the number of the controller's replicas serving traffic,
// which a rateLimit with scale divides its rate by; 0 when unknown.
func TranslatePolicy(p *nicv1.Policy, replicas int) (*Policy, []model.Problem, error) {
	t := &translator{ref: PolicyRef(p), replicas: replicas}
	s := &p.Spec
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"accessControl", s.AccessControl != nil}, {"rateLimit", s.RateLimit != nil}, {"jwt", s.JWT != nil},
		{"basicAuth", s.BasicAuth != nil}, {"ingressMTLS", s.IngressMTLS != nil}, {"egressMTLS", s.EgressMTLS != nil},
		{"oidc", s.OIDC != nil}, {"waf", s.WAF != nil}, {"apiKey", s.APIKey != nil}, {"cache", s.Cache != nil},
		{"cors", s.CORS != nil}, {"externalAuth", s.ExternalAuth != nil}, {"hsts", s.HSTS != nil},
	} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	if len(kinds) != 1 {
		return nil, nil, fmt.Errorf("a Policy must set exactly one policy, it sets %d (%s)", len(kinds), strings.Join(kinds, ", "))
	}
	out := &Policy{Ref: t.ref, Kind: kinds[0]}
	var err error
	switch {
	case s.AccessControl != nil:
		out.Access, err = accessControl(s.AccessControl)
	case s.BasicAuth != nil:
		out.BasicAuth, err = basicAuth(s.BasicAuth)
	case s.RateLimit != nil:
		out.Limits, err = t.rateLimit(s.RateLimit)
	case s.IngressMTLS != nil:
		out.IngressMTLS, err = t.ingressMTLS(s.IngressMTLS)
	case s.EgressMTLS != nil:
		out.EgressMTLS, err = t.egressMTLS(s.EgressMTLS)
	case s.ExternalAuth != nil:
		out.ExternalAuth, err = t.externalAuth(s.ExternalAuth)
	case s.APIKey != nil:
		out.APIKey, err = t.apiKey(s.APIKey)
	case s.CORS != nil:
		out.CORS, err = t.cors(s.CORS)
	case s.HSTS != nil:
		out.HSTS, err = hsts(s.HSTS)
	case s.Cache != nil:
		out.Cache, err = t.cache(s.Cache)
	case s.JWT != nil, s.OIDC != nil, s.WAF != nil:
		err = fmt.Errorf("spec.%s needs NGINX Plus (or App Protect) in NGINX Ingress Controller and is not supported by Causeway", kinds[0])
	default:
		err = fmt.Errorf("spec.%s is not supported by Causeway yet", kinds[0])
	}
	if err != nil {
		return nil, nil, err
	}
	return out, t.problems, nil
}

func accessControl(a *nicv1.AccessControl) (*model.AccessList, error) {
	if (len(a.Allow) > 0) == (len(a.Deny) > 0) {
		return nil, errors.New("spec.accessControl must set exactly one of allow and deny")
	}
	list := a.Allow
	if len(a.Deny) > 0 {
		list = a.Deny
	}
	if len(list) > maxAccessEntries {
		return nil, fmt.Errorf("spec.accessControl lists %d entries, more than %d", len(list), maxAccessEntries)
	}
	var prefixes []netip.Prefix
	for i, v := range list {
		p, err := model.ParseCIDR(v)
		if err != nil {
			return nil, fmt.Errorf("spec.accessControl entry %d %q: %v", i, model.Truncate(v), err)
		}
		prefixes = append(prefixes, p)
	}
	if len(a.Deny) > 0 {
		return &model.AccessList{Deny: prefixes}, nil
	}
	return &model.AccessList{Allow: prefixes}, nil
}

func basicAuth(b *nicv1.BasicAuth) (*BasicAuth, error) {
	if b.Secret == "" {
		return nil, errors.New("spec.basicAuth.secret is required")
	}
	realm := b.Realm
	if realm == "" {
		realm = "Restricted"
	}
	r, err := model.ParseRealm(realm)
	if err != nil {
		return nil, fmt.Errorf("spec.basicAuth.realm: %v", err)
	}
	return &BasicAuth{Secret: b.Secret, Realm: r}, nil
}

// scaleRate divides l's rate among replicas as NGINX Ingress Controller
// does: per second while a whole request per second remains, else per
// minute, rounded down, but never below 1r/m (where NIC would write an
// invalid 0r/m). The burst is not divided, as in NIC.
func scaleRate(l *model.Limits, replicas int) {
	if l.RPS > 0 {
		if l.RPS >= replicas {
			l.RPS /= replicas
			return
		}
		l.RPM, l.BurstRPM = max(l.RPS*60/replicas, 1), l.BurstRPS
		l.RPS, l.BurstRPS = 0, 0
		return
	}
	l.RPM = max(l.RPM/replicas, 1)
}

// clientAddressKeys are the rateLimit keys that count per client address,
// which is the model's default key; the unbraced spellings are accepted
// as Causeway always has.
var clientAddressKeys = map[string]bool{"${binary_remote_addr}": true, "$binary_remote_addr": true,
	"${remote_addr}": true, "$remote_addr": true}

// rateLimit translates a rateLimit Policy into the model's request limits,
// with NGINX Ingress Controller's defaults: excess requests within the
// burst are delayed unless noDelay, refused ones answer 503 (the
// ConfigMap's limit-req-status-code unless rejectCode) and are logged at
// error.
func (t *translator) rateLimit(r *nicv1.RateLimit) (*model.Limits, error) {
	n, unit, ok := strings.Cut(r.Rate, "r/")
	rate, err := strconv.Atoi(n)
	if !ok || err != nil || rate < 1 || rate > 1_000_000 || (unit != "s" && unit != "m") {
		return nil, fmt.Errorf("spec.rateLimit.rate %q: want a rate such as 10r/s or 60r/m", model.Truncate(r.Rate))
	}
	l := &model.Limits{Policy: t.ref}
	if !clientAddressKeys[r.Key] {
		if l.Key, err = model.ParseVariableTemplate(r.Key, model.RateLimitKeyVariables); err != nil {
			return nil, fmt.Errorf("spec.rateLimit.key %q: %v", model.Truncate(r.Key), err)
		}
		if len(l.Key) == 0 {
			return nil, errors.New("spec.rateLimit.key is required")
		}
	}
	burst := 0
	if r.Burst != nil {
		if *r.Burst < 0 || *r.Burst > 1_000_000 {
			return nil, fmt.Errorf("spec.rateLimit.burst %d: want 0 to 1000000", *r.Burst)
		}
		burst = *r.Burst
	}
	if unit == "s" {
		l.RPS, l.BurstRPS = rate, burst
	} else {
		l.RPM, l.BurstRPM = rate, burst
	}
	switch {
	case r.NoDelay != nil && *r.NoDelay:
		if r.Delay != nil {
			t.unsupported("spec.rateLimit.delay", "noDelay serves every request within the burst at once")
		}
	case r.Delay != nil:
		if *r.Delay < 0 || *r.Delay > 1_000_000 {
			return nil, fmt.Errorf("spec.rateLimit.delay %d: want 0 to 1000000", *r.Delay)
		}
		l.Pacing = model.BurstPacing{Spaced: true, Delay: *r.Delay}
	default:
		l.Pacing = model.BurstPacing{Spaced: true}
	}
	if r.RejectCode != nil {
		if c := *r.RejectCode; c < 400 || c > 599 {
			return nil, fmt.Errorf("spec.rateLimit.rejectCode %d: want 400 to 599", c)
		}
		l.RejectCode = *r.RejectCode
	}
	l.DryRun = r.DryRun != nil && *r.DryRun
	if r.LogLevel != "" {
		if l.LogLevel = model.LogLevel(r.LogLevel); !slices.Contains(model.LimitLogLevels, l.LogLevel) {
			return nil, fmt.Errorf("spec.rateLimit.logLevel %q: want info, notice, warn or error", model.Truncate(r.LogLevel))
		}
	}
	if r.ZoneSize != "" {
		n, err := model.ParseSize(r.ZoneSize)
		if size := model.Size(n); err != nil || size < model.MinLimitZoneSize || size > model.MaxLimitZoneSize {
			return nil, fmt.Errorf("spec.rateLimit.zoneSize %q: want a size from 32k to 128m", model.Truncate(r.ZoneSize))
		}
		size := model.Size(n)
		l.ZoneSize = &size
	}
	if r.Scale {
		if t.replicas < 1 {
			t.unsupported("spec.rateLimit.scale", "the number of replicas is not known (the controller counts the ready endpoints of "+
				"--publish-service, which is unset or has none), so each replica allows the whole rate")
		} else {
			scaleRate(l, t.replicas)
		}
	}
	if r.Condition != nil {
		t.notYet("spec.rateLimit.condition")
	}
	return l, nil
}
