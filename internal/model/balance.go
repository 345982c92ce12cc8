package model

import (
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/causeway/causeway/internal/balancer"
)

// Service annotations that choose how a backend balances its endpoints.
// They live on the Service because the method is a property of the
// backend, shared by every Ingress path that routes to it.
const (
	AnnotationLoadBalance    = "causeway.io/load-balance"
	AnnotationHashKey        = "causeway.io/hash-key"
	AnnotationStickyCookie   = "causeway.io/sticky-cookie"
	AnnotationStickyPath     = "causeway.io/sticky-path"
	AnnotationStickyMaxAge   = "causeway.io/sticky-max-age"
	AnnotationStickySameSite = "causeway.io/sticky-samesite"
	AnnotationStickySecure   = "causeway.io/sticky-secure"
	AnnotationRetries        = "causeway.io/proxy-next-upstream-tries"
)

// Balance is a backend's load-balancing method and its options, already
// validated against the same grammar the Lua side enforces.
type Balance struct {
	Method  balancer.Method
	HashKey string
	Sticky  *balancer.StickyOptions
	// Retries is how many other endpoints a failed connect may try; nil
	// means the default (one).
	Retries *int
}

// parseBalance reads a Service's annotations over the ConfigMap default.
// An invalid setting keeps the default method and raises a Problem on the
// Service; traffic keeps flowing.
func parseBalance(svc *corev1.Service, def balancer.Method) (Balance, error) {
	b := Balance{Method: def}
	a := svc.Annotations
	if v, ok := a[AnnotationLoadBalance]; ok {
		b.Method = balancer.Method(v)
	}
	if b.Method == balancer.CHash {
		b.HashKey = a[AnnotationHashKey]
		if b.HashKey == "" {
			b.HashKey = "$request_uri"
		}
	}
	if b.Method == balancer.Sticky {
		s := &balancer.StickyOptions{Cookie: a[AnnotationStickyCookie], Path: a[AnnotationStickyPath], SameSite: a[AnnotationStickySameSite]}
		if v, ok := a[AnnotationStickyMaxAge]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return Balance{Method: def}, fmt.Errorf("%s %q is not a number of seconds", AnnotationStickyMaxAge, truncate(v))
			}
			s.MaxAge = n
		}
		if v, ok := a[AnnotationStickySecure]; ok {
			secure, err := strconv.ParseBool(v)
			if err != nil {
				return Balance{Method: def}, fmt.Errorf("%s %q is not a boolean", AnnotationStickySecure, truncate(v))
			}
			s.Secure = secure
		}
		b.Sticky = s
	}
	if v, ok := a[AnnotationRetries]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return Balance{Method: def}, fmt.Errorf("%s %q is not a number", AnnotationRetries, truncate(v))
		}
		b.Retries = &n
	}
	// Validate one annotation at a time so the error names it. chash needs
	// a key to be valid at all; the real key is checked in its own step.
	method := balancer.Backend{Method: b.Method}
	if b.Method == balancer.CHash {
		method.HashKey = "$request_uri"
	}
	for _, step := range []struct {
		annotation string
		probe      balancer.Backend
	}{
		{AnnotationLoadBalance, method},
		{AnnotationRetries, balancer.Backend{Retries: b.Retries}},
		{AnnotationHashKey, balancer.Backend{Method: b.Method, HashKey: b.HashKey}},
		{"causeway.io/sticky-*", balancer.Backend{Method: b.Method, HashKey: b.HashKey, Sticky: b.Sticky}},
	} {
		step.probe.Key = "probe"
		if err := step.probe.Validate(); err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner // drop the probe's "backend probe:" context
			}
			return Balance{Method: def}, fmt.Errorf("%s: %w", step.annotation, err)
		}
	}
	return b, nil
}

// ineffectiveBalanceAnnotations lists, sorted, the annotations that the
// chosen method ignores: a hash key without chash, cookie options without
// sticky.
func ineffectiveBalanceAnnotations(a map[string]string, m balancer.Method) []string {
	var out []string
	if _, ok := a[AnnotationHashKey]; ok && m != balancer.CHash {
		out = append(out, AnnotationHashKey)
	}
	if m != balancer.Sticky {
		for _, k := range []string{AnnotationStickyCookie, AnnotationStickyMaxAge, AnnotationStickyPath, AnnotationStickySameSite, AnnotationStickySecure} {
			if _, ok := a[k]; ok {
				out = append(out, k)
			}
		}
	}
	return out
}
