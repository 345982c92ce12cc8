package build

import (
	"fmt"
	"github.com/causeway/causeway/internal/model"
	"strconv"

	corev1 "k8s.io/api/core/v1"
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

// parseBalance reads a Service's annotations over the ConfigMap default.
// An invalid setting keeps the default method and raises a Problem on the
// Service; traffic keeps flowing.
func parseBalance(svc *corev1.Service, def model.BalanceMethod) (model.Balance, error) {
	b := model.Balance{Method: def}
	a := svc.Annotations
	if v, ok := a[AnnotationLoadBalance]; ok {
		b.Method = model.BalanceMethod(v)
	}
	if b.Method == model.CHash {
		b.HashKey = a[AnnotationHashKey]
		if b.HashKey == "" {
			b.HashKey = "$request_uri"
		}
	}
	if b.Method == model.Sticky {
		s := &model.StickyCookie{Name: a[AnnotationStickyCookie], Path: a[AnnotationStickyPath], SameSite: a[AnnotationStickySameSite]}
		if v, ok := a[AnnotationStickyMaxAge]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return model.Balance{Method: def}, fmt.Errorf("%s %q is not a number of seconds", AnnotationStickyMaxAge, model.Truncate(v))
			}
			s.MaxAge = n
		}
		if v, ok := a[AnnotationStickySecure]; ok {
			secure, err := strconv.ParseBool(v)
			if err != nil {
				return model.Balance{Method: def}, fmt.Errorf("%s %q is not a boolean", AnnotationStickySecure, model.Truncate(v))
			}
			s.Secure = secure
		}
		b.Sticky = s
	}
	if v, ok := a[AnnotationRetries]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return model.Balance{Method: def}, fmt.Errorf("%s %q is not a number", AnnotationRetries, model.Truncate(v))
		}
		b.Retries = &n
	}
	// Validate one annotation at a time so the error names it.
	fail := func(annotation string, err error) (model.Balance, error) {
		return model.Balance{Method: def}, fmt.Errorf("%s: %w", annotation, err)
	}
	if !b.Method.Valid() {
		return fail(AnnotationLoadBalance, fmt.Errorf("unknown method %q", model.Truncate(string(b.Method))))
	}
	if b.Retries != nil {
		if err := model.ValidateRetries(*b.Retries); err != nil {
			return fail(AnnotationRetries, err)
		}
	}
	if b.Method == model.CHash {
		if err := model.ValidateHashKey(b.HashKey); err != nil {
			return fail(AnnotationHashKey, err)
		}
	}
	if b.Sticky != nil {
		if err := b.Sticky.Validate(); err != nil {
			return fail("causeway.io/sticky-*", err)
		}
	}
	return b, nil
}

// ineffectiveBalanceAnnotations lists, sorted, the annotations that the
// chosen method ignores: a hash key without chash, cookie options without
// sticky.
func ineffectiveBalanceAnnotations(a map[string]string, m model.BalanceMethod) []string {
	var out []string
	if _, ok := a[AnnotationHashKey]; ok && m != model.CHash {
		out = append(out, AnnotationHashKey)
	}
	if m != model.Sticky {
		for _, k := range []string{AnnotationStickyCookie, AnnotationStickyMaxAge, AnnotationStickyPath, AnnotationStickySameSite, AnnotationStickySecure} {
			if _, ok := a[k]; ok {
				out = append(out, k)
			}
		}
	}
	return out
}
