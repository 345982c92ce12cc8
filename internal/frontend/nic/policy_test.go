package nic

import (
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

func TestTranslatePolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     nicv1.PolicySpec
		err      string
		problems []string
		check    func(*testing.T, *Policy)
	}{
		{name: "allow", spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.0/8", "192.168.1.1"}}},
			check: func(t *testing.T, p *Policy) {
				want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.1/32")}
				if p.Kind != "accessControl" || p.Access == nil || len(p.Access.Deny) != 0 || len(p.Access.Allow) != 2 ||
					p.Access.Allow[0] != want[0] || p.Access.Allow[1] != want[1] {
					t.Errorf("policy %+v", p.Access)
				}
			}},
		{name: "deny", spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Deny: []string{"10.0.0.1"}}},
			check: func(t *testing.T, p *Policy) {
				if p.Access == nil || len(p.Access.Deny) != 1 || len(p.Access.Allow) != 0 {
					t.Errorf("policy %+v", p.Access)
				}
			}},
		{name: "allow and deny together", spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.1"}, Deny: []string{"10.0.0.2"}}},
			err: "exactly one of allow and deny"},
		{name: "a bad address", spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.0/33"}}}, err: "entry 0"},
		{name: "two kinds in one Policy", spec: nicv1.PolicySpec{AccessControl: &nicv1.AccessControl{Allow: []string{"10.0.0.1"}},
			BasicAuth: &nicv1.BasicAuth{Secret: "s"}}, err: "exactly one policy"},
		{name: "no kind", err: "exactly one policy, it sets 0"},
		{name: "basic auth with the default realm", spec: nicv1.PolicySpec{BasicAuth: &nicv1.BasicAuth{Secret: "users"}},
			check: func(t *testing.T, p *Policy) {
				if p.BasicAuth == nil || p.BasicAuth.Secret != "users" || p.BasicAuth.Realm != "Restricted" {
					t.Errorf("policy %+v", p.BasicAuth)
				}
			}},
		{name: "a realm that would inject", spec: nicv1.PolicySpec{BasicAuth: &nicv1.BasicAuth{Secret: "users", Realm: "a\"; return 200 \"x"}},
			err: "spec.basicAuth.realm"},
		{name: "a rate per second with nodelay", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}",
			Burst: ptr.To(20), NoDelay: ptr.To(true)}}, check: func(t *testing.T, p *Policy) {
			if p.Limits == nil || p.Limits.RPS != 10 || p.Limits.BurstRPS != 20 || p.Limits.RPM != 0 {
				t.Errorf("limits %+v", p.Limits)
			}
		}},
		{name: "a rate per minute", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "60r/m", Key: "$binary_remote_addr"}},
			check: func(t *testing.T, p *Policy) {
				if p.Limits == nil || p.Limits.RPM != 60 {
					t.Errorf("limits %+v", p.Limits)
				}
			}},
		{name: "a burst without nodelay or delay delays every excess request", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${binary_remote_addr}", Burst: ptr.To(5)}}, check: func(t *testing.T, p *Policy) {
			if p.Limits.Pacing != (model.BurstPacing{Spaced: true}) || p.Limits.Key != nil {
				t.Errorf("limits %+v", p.Limits)
			}
		}},
		{name: "delay serves the first excess requests at once", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${binary_remote_addr}", Burst: ptr.To(5), Delay: ptr.To(3)}}, check: func(t *testing.T, p *Policy) {
			if p.Limits.Pacing != (model.BurstPacing{Spaced: true, Delay: 3}) {
				t.Errorf("pacing %+v", p.Limits.Pacing)
			}
		}},
		{name: "noDelay wins over delay, as in NIC", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${binary_remote_addr}", Burst: ptr.To(5), Delay: ptr.To(3), NoDelay: ptr.To(true)}}, problems: []string{"spec.rateLimit.delay"},
			check: func(t *testing.T, p *Policy) {
				if p.Limits.Pacing != (model.BurstPacing{}) {
					t.Errorf("pacing %+v", p.Limits.Pacing)
				}
			}},
		{name: "a negative delay", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}",
			Delay: ptr.To(-1)}}, err: "spec.rateLimit.delay"},
		{name: "reject code, dry run, log level and zone size", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${binary_remote_addr}", RejectCode: ptr.To(429), DryRun: ptr.To(true), LogLevel: "warn", ZoneSize: "10M"}},
			check: func(t *testing.T, p *Policy) {
				l := p.Limits
				if l.RejectCode != 429 || !l.DryRun || l.LogLevel != model.LogWarn || l.ZoneSize == nil || *l.ZoneSize != 10<<20 {
					t.Errorf("limits %+v", l)
				}
			}},
		{name: "a reject code that is not an error", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}",
			RejectCode: ptr.To(302)}}, err: "spec.rateLimit.rejectCode 302"},
		{name: "a log level nginx's limit_req does not take", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${binary_remote_addr}", LogLevel: "debug"}}, err: "spec.rateLimit.logLevel"},
		{name: "a zone under 32k", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}",
			ZoneSize: "31k"}}, err: "spec.rateLimit.zoneSize"},
		{name: "a zone over 128m", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}",
			ZoneSize: "1g"}}, err: "spec.rateLimit.zoneSize"},
		{name: "a zone size that is not a size", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}",
			ZoneSize: "10MB"}}, err: "spec.rateLimit.zoneSize"},
		{name: "scale without a known number of replicas is reported", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${binary_remote_addr}", Scale: true}}, problems: []string{"spec.rateLimit.scale: the number of replicas is not known"},
			check: func(t *testing.T, p *Policy) {
				if p.Limits.RPS != 10 {
					t.Errorf("rate %d r/s, want the whole 10", p.Limits.RPS)
				}
			}},
		{name: "a key of a header and the URI", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${http_x_api_key}:${uri}"}}, check: func(t *testing.T, p *Policy) {
			want := model.Template{{Variable: "http_x_api_key"}, {Literal: ":"}, {Variable: "uri"}}
			if !slices.Equal(p.Limits.Key, want) {
				t.Errorf("key %+v, want %+v", p.Limits.Key, want)
			}
		}},
		{name: "a key of a variable outside the list", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "${host}"}}, err: "${host} is not a variable allowed here"},
		{name: "a key of an unbraced variable", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: "$http_x_user"}}, err: "${name}"},
		{name: "a key that would close the quote", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s",
			Key: `a"; return 200 "x`}}, err: "spec.rateLimit.key"},
		{name: "a condition is reported", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/s", Key: "${binary_remote_addr}",
			Condition: &nicv1.RateLimitCondition{Default: true}}}, problems: []string{"spec.rateLimit.condition"}},
		{name: "a bad rate", spec: nicv1.PolicySpec{RateLimit: &nicv1.RateLimit{Rate: "10r/h", Key: "${binary_remote_addr}"}}, err: "spec.rateLimit.rate"},
		{name: "jwt needs Plus", spec: nicv1.PolicySpec{JWT: &nicv1.JWTAuth{Secret: "jwk"}}, err: "needs NGINX Plus"},
		{name: "oidc needs Plus", spec: nicv1.PolicySpec{OIDC: &nicv1.OIDC{}}, err: "needs NGINX Plus"},
		{name: "waf needs Plus", spec: nicv1.PolicySpec{WAF: &nicv1.WAF{Enable: true}}, err: "needs NGINX Plus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := translatePolicyCase(t, tc.spec, tc.err, tc.problems)
			if out != nil && tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// translatePolicyCase translates a Policy shop/pol of spec and checks its
// rejection (a fragment of the error, "" for none) or its Problems (a
// fragment of each, in order). It returns the Policy, nil when rejected.
func translatePolicyCase(t *testing.T, spec nicv1.PolicySpec, wantErr string, wantProblems []string) *Policy {
	t.Helper()
	p := &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pol"}, Spec: spec}
	out, problems, err := TranslatePolicy(p, 0)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err %v, want one with %q", err, wantErr)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems %v, want %v", problems, wantProblems)
	}
	for i, want := range wantProblems {
		if !strings.Contains(problems[i].Message, want) || problems[i].Object != (model.ObjectRef{Kind: "Policy", Namespace: "shop", Name: "pol"}) {
			t.Errorf("problem %v, want one on Policy shop/pol with %q", problems[i], want)
		}
	}
	return out
}

// TestScaleRate: scale divides the rate by the replicas serving traffic,
// per second while a whole request per second remains, else per minute,
// rounded down and never below 1r/m; the burst is kept.
func TestScaleRate(t *testing.T) {
	for _, tc := range []struct {
		rate     string
		burst    int
		replicas int
		want     model.Limits
	}{
		{"10r/s", 5, 1, model.Limits{RPS: 10, BurstRPS: 5}},
		{"10r/s", 5, 2, model.Limits{RPS: 5, BurstRPS: 5}},
		{"10r/s", 5, 3, model.Limits{RPS: 3, BurstRPS: 5}},
		{"10r/s", 5, 10, model.Limits{RPS: 1, BurstRPS: 5}},
		{"10r/s", 5, 12, model.Limits{RPM: 50, BurstRPM: 5}},
		{"1r/s", 0, 7, model.Limits{RPM: 8}},
		{"90r/m", 4, 4, model.Limits{RPM: 22, BurstRPM: 4}},
		{"1r/m", 0, 3, model.Limits{RPM: 1}},
	} {
		t.Run(fmt.Sprintf("%s over %d", tc.rate, tc.replicas), func(t *testing.T) {
			burst := tc.burst
			p := &nicv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "pol"}, Spec: nicv1.PolicySpec{
				RateLimit: &nicv1.RateLimit{Rate: tc.rate, Key: "${binary_remote_addr}", Burst: &burst, Scale: true}}}
			out, problems, err := TranslatePolicy(p, tc.replicas)
			if err != nil || len(problems) > 0 {
				t.Fatalf("%v %v", err, problems)
			}
			l := out.Limits
			got := model.Limits{RPS: l.RPS, RPM: l.RPM, BurstRPS: l.BurstRPS, BurstRPM: l.BurstRPM}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%+v, want %+v", got, tc.want)
			}
		})
	}
}
