package nic

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// notNames are the spec fields that look like references (their names say
// secret, service, route or policy) but name nothing the build looks up.
var notNames = map[string]string{
	"spec.upstreams[].healthCheck.grpcService":                    "the gRPC service a health check asks for, not a Kubernetes Service",
	"spec.subroutes[].route":                                      "a VirtualServerRoute's subroute cannot delegate further: it is refused",
	"spec.jwt.secret":                                             "jwt needs NGINX Plus: the Policy is refused",
	"spec.jwt.trustedCertSecret":                                  "jwt needs NGINX Plus: the Policy is refused",
	"spec.oidc.clientSecret":                                      "oidc needs NGINX Plus: the Policy is refused",
	"spec.oidc.trustedCertSecret":                                 "oidc needs NGINX Plus: the Policy is refused",
	"spec.waf.apPolicy":                                           "waf needs App Protect: the Policy is refused",
	"spec.waf.apBundleSource.secret":                              "waf needs App Protect: the Policy is refused",
	"spec.waf.apBundleSource.trustedCertSecret":                   "waf needs App Protect: the Policy is refused",
	"spec.waf.securityLog.apLogBundleSource.secret":               "waf needs App Protect: the Policy is refused",
	"spec.waf.securityLog.apLogBundleSource.trustedCertSecret":    "waf needs App Protect: the Policy is refused",
	"spec.waf.securityLogs[].apLogBundleSource.secret":            "waf needs App Protect: the Policy is refused",
	"spec.waf.securityLogs[].apLogBundleSource.trustedCertSecret": "waf needs App Protect: the Policy is refused",
}

// TestReferencesDeclared sets every string field of each kind's spec whose
// name says it names an object (secret, service, route, policy, and
// PolicyReference names) to a value of its own, and fails unless the
// kind's References lists it or notNames says why not: a new field naming
// a Secret cannot be forgotten.
func TestReferencesDeclared(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "app", Name: "x"}
	seen := map[string]bool{}
	check := func(kind string, spec any, refs func() []model.Reference) {
		fields := map[string]string{} // value -> path
		fill(reflect.ValueOf(spec).Elem(), "spec", fields)
		for _, path := range fields {
			seen[path] = true
		}
		if len(fields) == 0 {
			t.Fatalf("%s: no field looks like a reference", kind)
		}
		got := refs()
		for value, path := range fields {
			listed := slices.ContainsFunc(got, func(r model.Reference) bool { return r.Name == value && r.Namespace == "app" })
			_, exempt := notNames[path]
			switch {
			case !listed && !exempt:
				t.Errorf("%s %s names an object that References does not list: declare it (nic/references.go) or say why not (notNames)", kind, path)
			case listed && exempt:
				t.Errorf("%s %s is listed and in notNames", kind, path)
			}
		}
		for _, r := range got {
			if fields[r.Name] == "" {
				t.Errorf("%s: References lists %v, which no field named", kind, r)
			}
		}
	}
	vs := &nicv1.VirtualServer{ObjectMeta: meta}
	check("VirtualServer", &vs.Spec, func() []model.Reference { return VirtualServerReferences(vs) })
	vsr := &nicv1.VirtualServerRoute{ObjectMeta: meta}
	check("VirtualServerRoute", &vsr.Spec, func() []model.Reference { return VirtualServerRouteReferences(vsr) })
	ts := &nicv1.TransportServer{ObjectMeta: meta}
	check("TransportServer", &ts.Spec, func() []model.Reference { return TransportServerReferences(ts) })
	// A Policy sets one kind of policy; its References read them all.
	p := &nicv1.Policy{ObjectMeta: meta}
	check("Policy", &p.Spec, func() []model.Reference { return PolicyReferences(p) })
	gc := &nicv1.GlobalConfiguration{ObjectMeta: meta}
	fields := map[string]string{}
	fill(reflect.ValueOf(&gc.Spec).Elem(), "spec", fields)
	if len(fields) != 0 {
		t.Errorf("GlobalConfiguration fields look like references: %v; list them", fields)
	}
	for path := range notNames {
		if !seen[path] {
			t.Errorf("notNames lists %s, which no kind has", path)
		}
	}
}

var policyReferenceType = reflect.TypeFor[nicv1.PolicyReference]()

// fill allocates every pointer and one element of every slice under v,
// and sets each string field that looks like a reference to a value of
// its own, recorded in fields with its path.
func fill(v reflect.Value, path string, fields map[string]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem().Kind() != reflect.Struct {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), path, fields)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Struct {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), path+"[]", fields)
	case reflect.Struct:
		if strings.Count(path, ".") > 8 {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			p := path
			if name != "" {
				p += "." + name
			}
			if f.Type.Kind() == reflect.String {
				l := strings.ToLower(name)
				if (v.Type() == policyReferenceType && name == "name") || strings.Contains(l, "secret") ||
					strings.Contains(l, "service") || l == "route" || strings.Contains(l, "policy") {
					value := fmt.Sprintf("ref-%d", len(fields))
					v.Field(i).SetString(value)
					fields[value] = p
				}
				continue
			}
			fill(v.Field(i), p, fields)
		}
	}
}
