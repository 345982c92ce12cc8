package annotations

import (
	"slices"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestModSecurityAnnotations: a row per annotation of the waf group, good
// and hostile values. What the builder makes of them (the ConfigMap's
// switch, allow-snippet-annotations, a missing module) is in
// internal/build's TestModSecurity.
func TestModSecurityAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		enable  *bool
		crs     bool
		rules   int
		txid    string
		refused []string
		closed  bool
	}{
		{name: "on", ann: map[string]string{"enable-modsecurity": "true"}, enable: ptrTo(true)},
		{name: "off", ann: map[string]string{"enable-modsecurity": "0"}, enable: ptrTo(false)},
		{name: "invalid switch closes", ann: map[string]string{"enable-modsecurity": "yes please"}, closed: true},
		{name: "CRS", ann: map[string]string{"enable-owasp-core-rules": "true"}, crs: true},
		{name: "invalid CRS is refused", ann: map[string]string{"enable-owasp-core-rules": "sure"}, refused: []string{"enable-owasp-core-rules"}},
		{name: "transaction id", ann: map[string]string{"modsecurity-transaction-id": "$request_id"}, txid: "${request_id}"},
		{name: "hostile transaction id is dropped", ann: map[string]string{"modsecurity-transaction-id": "$request_id\";\nmodsecurity off;#"}},
		{name: "snippet", ann: map[string]string{"modsecurity-snippet": "SecRuleEngine On\nSecRuleRemoveById 920350"}, rules: 2},
		{name: "snippet including the CRS", ann: map[string]string{"modsecurity-snippet": "Include /etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf"}, rules: 1, crs: true},
		{name: "hostile snippet is refused", ann: map[string]string{"modsecurity-snippet": `SecRule ARGS "@rx x" "id:1,phase:2,exec:/bin/sh"`}, refused: []string{"modsecurity-snippet"}},
		{name: "nginx text in a snippet is refused", ann: map[string]string{"modsecurity-snippet": "}\nlocation /x { return 200; }"}, refused: []string{"modsecurity-snippet"}},
		{name: "a CRS id is refused", ann: map[string]string{"modsecurity-snippet": `SecAction "id:949110,phase:1,pass"`}, refused: []string{"modsecurity-snippet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			ms := res.ModSecurity
			if ms == nil {
				t.Fatal("no ModSecurity settings")
			}
			if closed := len(res.FailClosed) > 0; closed != tc.closed {
				t.Errorf("FailClosed %v, want closed %v", res.FailClosed, tc.closed)
			}
			if (ms.Enable == nil) != (tc.enable == nil) || ms.Enable != nil && *ms.Enable != *tc.enable {
				t.Errorf("Enable %v, want %v", ms.Enable, tc.enable)
			}
			if ms.CRS != tc.crs || ms.TransactionID.String() != tc.txid {
				t.Errorf("CRS %v, transaction id %q; want %v, %q", ms.CRS, ms.TransactionID.String(), tc.crs, tc.txid)
			}
			if n := 0; ms.Rules != nil {
				n = len(ms.Rules.Directives)
				if n != tc.rules {
					t.Errorf("%d directives, want %d", n, tc.rules)
				}
			} else if tc.rules != 0 {
				t.Errorf("no rules, want %d directives", tc.rules)
			}
			var want []string
			for _, r := range tc.refused {
				want = append(want, DefaultPrefix+"/"+r)
			}
			if !slices.Equal(ms.Refused, want) {
				t.Errorf("Refused %v, want %v", ms.Refused, want)
			}
			// Every refusal and invalid value is a Problem: the builder
			// reports the refusals' Problems (through GateSnippets), the
			// reader the rest.
			all := append(problems, res.GateSnippets(testRef, true)...)
			wantProblems := len(tc.refused)
			if tc.closed || tc.name == "hostile transaction id is dropped" {
				wantProblems++
			}
			if len(all) != wantProblems {
				t.Errorf("problems %v, want %d", all, wantProblems)
			}
			for _, p := range all {
				if p.Reason != model.ReasonInvalidAnnotation {
					t.Errorf("problem %v, want %s", p, model.ReasonInvalidAnnotation)
				}
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
