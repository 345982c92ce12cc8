package gateway

import (
	"slices"

	"github.com/causeway/causeway/internal/model"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// defaultRetryAttempts is the retries of a rule's retry without
// attempts: one, as Envoy (behind most Gateway API implementations)
// does, rather than nginx's once per endpoint, which would make the
// number of tries depend on how many endpoints are ready.
const defaultRetryAttempts = 1

// ruleRetry translates a rule's retry (HTTPRoute spec.rules[].retry)
// into pol's model.RouteRetry: connection errors and timeouts always
// retry (the spec's SHOULD), and so do the codes. A code nginx cannot
// retry on, attempts beyond model.MaxRetryAttempts and a backoff other
// than 0 (nginx tries again at once, and the spec forbids a retry
// before the backoff) leave the rule out rather than serve a retry
// other than the one written.
func ruleRetry(field string, in *gwv1.HTTPRouteRetry, pol routePolicy) (routePolicy, *ruleError) {
	r := &model.RouteRetry{Attempts: defaultRetryAttempts}
	for i, c := range in.Codes {
		code, err := model.ParseRetryCode(int(c))
		if err != nil {
			return pol, ruleUnsupported("%s.codes[%d] %d: %v", field, i, c, err)
		}
		if !slices.Contains(r.Codes, code) {
			r.Codes = append(r.Codes, code)
		}
	}
	slices.Sort(r.Codes)
	if in.Attempts != nil {
		n := *in.Attempts
		if n < 1 || n > model.MaxRetryAttempts {
			return pol, ruleUnsupported("%s.attempts %d: Causeway retries 1 to %d times", field, n, model.MaxRetryAttempts)
		}
		r.Attempts = n
	}
	if in.Backoff != nil {
		d, err := readGatewayDuration(string(*in.Backoff))
		if err != nil {
			return pol, ruleUnsupported("%s.backoff: %v", field, err)
		}
		if d != 0 {
			return pol, ruleUnsupported("%s.backoff %s: nginx retries at once and cannot wait between tries; only 0s is served", field, *in.Backoff)
		}
	}
	if err := r.Validate(); err != nil {
		// Not expected: every part passed its check above.
		return pol, ruleUnsupported("%s: %v", field, err)
	}
	pol.get().Retry.Route = r
	return pol, nil
}
