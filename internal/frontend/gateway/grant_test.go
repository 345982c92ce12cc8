package gateway

import (
	"testing"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestGranted(t *testing.T) {
	const web = "gateway-conformance-web-backend"
	from := GrantFrom{Group: group, Kind: "Gateway", Namespace: infra}
	to := GrantTo{Kind: "Secret", Namespace: web, Name: "certificate"}
	mk := func(ns, fromGroup, fromKind, fromNS, toGroup, toKind, toName string) *gwv1.ReferenceGrant {
		g := grant(ns, fromNS, fromKind, toKind, toName)
		g.Spec.From[0].Group = gwv1.Group(fromGroup)
		g.Spec.To[0].Group = gwv1.Group(toGroup)
		return g
	}
	for _, tc := range []struct {
		name  string
		grant *gwv1.ReferenceGrant
		from  GrantFrom
		to    GrantTo
		ok    bool
	}{
		{"ReferenceGrant: same namespace needs none", nil, from, GrantTo{Kind: "Secret", Namespace: infra, Name: "x"}, true},
		{"ReferenceGrant: none: not permitted", nil, from, to, false},
		{"GatewaySecretReferenceGrantSpecific", mk(web, group, "Gateway", infra, "", "Secret", "certificate"), from, to, true},
		{"GatewaySecretReferenceGrantAllInNamespace: to.name unset", mk(web, group, "Gateway", infra, "", "Secret", ""), from, to, true},
		{"GatewaySecretInvalidReferenceGrant: wrong namespace", mk("gateway-conformance-app-backend", group, "Gateway", infra, "", "Secret", "certificate"), from, to, false},
		{"GatewaySecretInvalidReferenceGrant: wrong from group", mk(web, "not-the-group-youre-looking-for", "Gateway", infra, "", "Secret", "certificate"), from, to, false},
		{"GatewaySecretInvalidReferenceGrant: wrong from kind", mk(web, group, "HTTPRoute", infra, "", "Secret", "certificate"), from, to, false},
		{"GatewaySecretInvalidReferenceGrant: wrong from namespace", mk(web, group, "Gateway", "not-the-namespace-youre-looking-for", "", "Secret", "certificate"), from, to, false},
		{"GatewaySecretInvalidReferenceGrant: wrong to group", mk(web, group, "Gateway", infra, "not-the-group-youre-looking-for", "Secret", "certificate"), from, to, false},
		{"GatewaySecretInvalidReferenceGrant: wrong to kind", mk(web, group, "Gateway", infra, "", "Service", "certificate"), from, to, false},
		{"GatewaySecretInvalidReferenceGrant: wrong to name", mk(web, group, "Gateway", infra, "", "Secret", "not-the-certificate-youre-looking-for"), from, to, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var grants []*gwv1.ReferenceGrant
			if tc.grant != nil {
				grants = append(grants, tc.grant)
			}
			if got := Granted(grants, tc.from, tc.to); got != tc.ok {
				t.Errorf("Granted = %v, want %v", got, tc.ok)
			}
		})
	}
}
