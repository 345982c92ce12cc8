package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/causeway/causeway/internal/status/leader"
)

func TestKubeFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"publish addresses, repeated and listed", []string{"--publish-address", "192.0.2.1,lb.example.com", "--publish-address", "2001:db8::1"}, ""},
		{"publish service", []string{"--publish-service", "causeway-system/causeway"}, ""},
		{"both publish flags", []string{"--publish-service", "a/b", "--publish-address", "192.0.2.1"}, "exclude each other"},
		{"publish service without namespace", []string{"--publish-service", "causeway"}, "NAMESPACE/NAME"},
		{"bad publish address", []string{"--publish-address", "not an address"}, "neither an IP address nor a DNS name"},
		{"short lease", []string{"--leader-election-lease-duration", "5s"}, "must exceed --leader-election-renew-deadline"},
		{"renew within jitter of retry", []string{"--leader-election-renew-deadline", "2s"}, "must exceed 1.2"},
		{"zero retry", []string{"--leader-election-retry-period", "0s"}, "must be positive"},
		{"test timings", []string{"--leader-election-lease-duration", "3s", "--leader-election-renew-deadline", "2s", "--leader-election-retry-period", "500ms"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k kubeFlags
			fl := pflag.NewFlagSet("test", pflag.ContinueOnError)
			k.register(fl)
			if err := fl.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := k.validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("validate = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestLeaseNamespace(t *testing.T) {
	for _, tc := range []struct {
		name, flag, env, configMap, want string
		wantErr                          bool
	}{
		{name: "flag wins", flag: "ns-flag", env: "ns-env", configMap: "ns-cm/causeway", want: "ns-flag"},
		{name: "then POD_NAMESPACE", env: "ns-env", configMap: "ns-cm/causeway", want: "ns-env"},
		{name: "then the ConfigMap's namespace", configMap: "ns-cm/causeway", want: "ns-cm"},
		{name: "nothing to go by", configMap: "causeway", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", tc.env)
			k := kubeFlags{electionNamespace: tc.flag, leaseDuration: 15 * time.Second}
			got, err := k.leaseNamespace(tc.configMap)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("leaseNamespace = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestEndpointPortsWithoutService: with --publish-address, NIC's
// externalEndpoints[].ports name nginx's own listeners.
func TestEndpointPortsWithoutService(t *testing.T) {
	if got := endpointPorts(nil, 8080, 8443)(); got != "[8080,8443]" {
		t.Errorf("ports %q, want [8080,8443]", got)
	}
}

// TestControllerObjectRefs: each flag naming an object is checked, and
// its messages name the object's kind (a ConfigMap is no Secret).
func TestControllerObjectRefs(t *testing.T) {
	f := &controllerFlags{}
	for _, r := range f.objectRefs() {
		if got := checkObjectRef(r.kind, "ns/Bad_Name"); got == nil || !strings.Contains(got.Error(), r.kind+` name "Bad_Name"`) {
			t.Errorf("%s: %v, want an error naming the %s", r.flag, got, r.kind)
		}
		if got := checkObjectRef(r.kind, "bad"); got == nil || !strings.Contains(got.Error(), "NAMESPACE/NAME of a "+r.kind) {
			t.Errorf("%s: %v, want an error naming the %s", r.flag, got, r.kind)
		}
	}
	kinds := map[string]string{}
	for _, r := range f.objectRefs() {
		kinds[r.flag] = r.kind
	}
	for flag, kind := range map[string]string{"--configmap": "ConfigMap", "--tcp-services-configmap": "ConfigMap",
		"--udp-services-configmap": "ConfigMap", "--default-ssl-certificate": "Secret", "--global-configuration": "GlobalConfiguration"} {
		if kinds[flag] != kind {
			t.Errorf("%s is checked as a %q, want a %s", flag, kinds[flag], kind)
		}
	}
}

// TestResyncAsksWhileLeading: the status writers plan from the sync resync
// asks for, which a follower does not need (an address change there costs
// no whole-cluster sync); becoming leader asks for one.
func TestResyncAsksWhileLeading(t *testing.T) {
	r := &kubeReporter{resyncs: make(chan struct{}, 1)}
	var err error
	r.elector, err = leader.New(leader.Options{Disabled: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnChange: func(leading bool) {
			if leading {
				r.resync()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	r.resync() // the published addresses changed on a follower
	select {
	case <-r.resyncs:
		t.Fatal("a follower asked for a sync")
	default:
	}
	go r.elector.Run(t.Context()) // leads at once: election disabled
	select {
	case <-r.resyncs:
	case <-time.After(5 * time.Second):
		t.Fatal("becoming leader asked for no sync")
	}
	r.resync() // an address change while leading
	select {
	case <-r.resyncs:
	default:
		t.Fatal("the leader's address change asked for no sync")
	}
}
