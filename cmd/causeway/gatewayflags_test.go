package main

import (
	"maps"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

func TestGatewayFlags(t *testing.T) {
	own := map[string]int{"--http-port": 80, "--https-port": 443, "--health-port": 8081, "--metrics-port": 9113}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"ClusterIP in a range of its own", []string{"--gateway-service-type", "ClusterIP", "--gateway-port-range", "40000-40099"}, ""},
		{"NodePort", []string{"--gateway-service-type=NodePort"}, ""},
		{"ExternalName", []string{"--gateway-service-type", "ExternalName"}, "want LoadBalancer, NodePort or ClusterIP"},
		{"a range holding the HTTPS port", []string{"--gateway-port-range", "400-500"}, "holds --https-port 443"},
		{"a range backwards", []string{"--gateway-port-range", "20999-20000"}, "want FIRST-LAST"},
		{"one port", []string{"--gateway-port-range", "20000"}, "want FIRST-LAST"},
		{"empty selector", []string{"--gateway-service-selector", ""}, "want KEY=VALUE"},
		{"bad selector value", []string{"--gateway-service-selector", "app=a b"}, "--gateway-service-selector"},
		{"selector with a set", []string{"--gateway-service-selector", "app in (a)"}, "want KEY=VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g gatewayFlags
			fl := pflag.NewFlagSet("test", pflag.ContinueOnError)
			g.register(fl)
			if err := fl.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := g.validate(own)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("validate = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
	var g gatewayFlags
	fl := pflag.NewFlagSet("test", pflag.ContinueOnError)
	g.register(fl)
	if err := fl.Parse([]string{"--gateway-service-selector", "app.kubernetes.io/name=causeway,app.kubernetes.io/instance=edge"}); err != nil {
		t.Fatal(err)
	}
	o, err := g.options("causeway-system")
	if err != nil {
		t.Fatal(err)
	}
	if o.Namespace != "causeway-system" || o.Type != corev1.ServiceTypeLoadBalancer || o.Ports.String() != "20000-20999" ||
		!maps.Equal(o.Selector, map[string]string{"app.kubernetes.io/name": "causeway", "app.kubernetes.io/instance": "edge"}) {
		t.Errorf("options = %+v", o)
	}
}

func TestControllerNamespace(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	if got := controllerNamespace("edge/causeway"); got != "edge" {
		t.Errorf("without $POD_NAMESPACE: %q", got)
	}
	t.Setenv("POD_NAMESPACE", "pods")
	if got := controllerNamespace("edge/causeway"); got != "pods" {
		t.Errorf("with $POD_NAMESPACE: %q", got)
	}
}
