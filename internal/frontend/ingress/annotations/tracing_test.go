package annotations

import (
	"reflect"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestTracing(t *testing.T) {
	on, off := true, false
	name := func(s string) model.OperationName {
		o, err := model.ParseOperationName(s)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.TracingPolicy
		problems []problem
	}{
		{"none", map[string]string{}, nil, nil},
		{"on", map[string]string{"enable-opentelemetry": "true"}, &model.TracingPolicy{Enabled: &on}, nil},
		{"off (a health check's Ingress)", map[string]string{"enable-opentelemetry": "false"}, &model.TracingPolicy{Enabled: &off}, nil},
		{"on, distrusting", map[string]string{"enable-opentelemetry": "true", "opentelemetry-trust-incoming-span": "false"},
			&model.TracingPolicy{Enabled: &on, TrustIncoming: &off}, nil},
		// ingress-nginx ignores these without enable-opentelemetry "true";
		// they apply wherever the ConfigMap turns tracing on.
		{"trust alone", map[string]string{"opentelemetry-trust-incoming-span": "false"}, &model.TracingPolicy{TrustIncoming: &off}, nil},
		{"operation name, ingress-nginx's grammar", map[string]string{"opentelemetry-operation-name": "checkout_api-v2"},
			&model.TracingPolicy{OperationName: name("checkout_api-v2")}, nil},
		{"operation name with variables", map[string]string{"opentelemetry-operation-name": "HTTP $request_method $uri"},
			&model.TracingPolicy{OperationName: name("HTTP $request_method $uri")}, nil},
		{"invalid switch", map[string]string{"enable-opentelemetry": "yes"}, nil, []problem{invalid("enable-opentelemetry")}},
		{"a variable nginx would evaluate", map[string]string{"enable-opentelemetry": "true", "opentelemetry-operation-name": "$http_authorization"},
			&model.TracingPolicy{Enabled: &on}, []problem{invalid("opentelemetry-operation-name")}},
		{"an injection", map[string]string{"opentelemetry-operation-name": "x;\n}\nlocation / {"}, nil, []problem{invalid("opentelemetry-operation-name")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Location.Tracing, tc.want) {
				t.Fatalf("Tracing = %+v, want %+v", res.Location.Tracing, tc.want)
			}
		})
	}
}
