package build

import (
	"bytes"
	"encoding/base64"
	"maps"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/test/testcert"
)

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// TestConfigReferences: the objects the controller's ConfigMap names are
// read and checked; whatever cannot be used is a Problem on the
// controller's ConfigMap naming the key, and is left out.
func TestConfigReferences(t *testing.T) {
	config := configMap("causeway", "config", map[string]string{
		"add-headers": "causeway/add", "proxy-set-headers": "other/set", "ssl-dh-param": "causeway/dh",
	})
	add := configMap("causeway", "add", map[string]string{
		"X-Frame-Options": "DENY", "X-Bad": "a\x01b", "bad name": "x", "Server": "me", "X-Var": "$host",
	})
	set := configMap("other", "set", map[string]string{"X-Tenant": "blue", "Host": "evil", "X-Forwarded-For": "1.2.3.4"})
	dh := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "dh"}, Data: map[string][]byte{"dhparam.pem": testcert.DHParams2048}}
	snap := &source.Snapshot{ConfigMaps: []*corev1.ConfigMap{config, add, set}, Secrets: []*corev1.Secret{dh}}

	m, problems := Build(snap, testOpts)
	c := m.Config
	if len(c.AddHeaders) != 1 || c.AddHeaders[0] != (model.Header{Name: "X-Frame-Options", Value: "DENY"}) {
		t.Errorf("add-headers %v, want X-Frame-Options only", c.AddHeaders)
	}
	if len(c.ProxySetHeaders) != 1 || c.ProxySetHeaders[0] != (model.Header{Name: "X-Tenant", Value: "blue"}) {
		t.Errorf("proxy-set-headers %v, want X-Tenant only", c.ProxySetHeaders)
	}
	if m.DHParam == nil || m.DHParam.Key() != "causeway/dh" {
		t.Errorf("DH parameters %v, want causeway/dh", m.DHParam)
	}
	for key, want := range map[string]int{`key "add-headers"`: 4, `key "proxy-set-headers"`: 2} {
		n := 0
		for _, p := range problems {
			if strings.Contains(p.Message, key) {
				n++
				if p.Object.Kind != "ConfigMap" || p.Object.Name != "config" || p.Reason != model.ReasonInvalidConfig {
					t.Errorf("problem %v is not on the controller's ConfigMap", p)
				}
			}
		}
		if n != want {
			t.Errorf("%d problems with %s, want %d: %v", n, key, want, problems)
		}
	}

	// Missing objects and bad DH parameters: the settings are dropped.
	for _, tc := range []struct {
		name    string
		secrets []*corev1.Secret
		want    string
	}{
		{"missing secret", nil, `Secret causeway/dh not found`},
		{"no dhparam.pem", []*corev1.Secret{{ObjectMeta: dh.ObjectMeta, Data: map[string][]byte{"tls.crt": []byte("x")}}}, "no key dhparam.pem"},
		{"garbage", []*corev1.Secret{{ObjectMeta: dh.ObjectMeta, Data: map[string][]byte{"dhparam.pem": []byte("garbage")}}}, "want a PEM block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, problems := Build(&source.Snapshot{ConfigMaps: []*corev1.ConfigMap{config}, Secrets: tc.secrets}, testOpts)
			if m.DHParam != nil || m.Config.AddHeaders != nil || m.Config.ProxySetHeaders != nil {
				t.Fatalf("unusable references kept: %v %v %v", m.DHParam, m.Config.AddHeaders, m.Config.ProxySetHeaders)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Message)
			}
			all := strings.Join(got, "\n")
			for _, want := range []string{tc.want, `key "add-headers": ConfigMap causeway/add not found`, `key "proxy-set-headers": ConfigMap other/set not found`} {
				if !strings.Contains(all, want) {
					t.Errorf("problems lack %q:\n%s", want, all)
				}
			}
		})
	}
}

// TestBackendServerHeaderNeedsServerTokens: allow-backend-server-header
// alone has no effect, as in ingress-nginx; a Problem says so.
func TestBackendServerHeaderNeedsServerTokens(t *testing.T) {
	for _, tc := range []struct {
		tokens string
		want   int
	}{{"false", 1}, {"true", 0}} {
		_, problems := Build(&source.Snapshot{ConfigMaps: []*corev1.ConfigMap{configMap("causeway", "config",
			map[string]string{"allow-backend-server-header": "true", "server-tokens": tc.tokens})}}, testOpts)
		if got := len(problemsNaming(problems, `key "allow-backend-server-header"`)); got != tc.want {
			t.Errorf("server-tokens %s: %d problems, want %d: %v", tc.tokens, got, tc.want, problems)
		}
	}
}

// TestTicketKeys: the session ticket keys come from the Secret that
// ssl-session-ticket-key-secret names (tickets.key, then
// tickets.previous.key; raw or base64), which wins over
// ssl-session-ticket-key; one that cannot be used leaves nginx its own,
// with a Problem.
func TestTicketKeys(t *testing.T) {
	k48, k80 := bytes.Repeat([]byte{1}, 48), bytes.Repeat([]byte{2}, 80)
	b64 := base64.StdEncoding.EncodeToString
	secret := func(data map[string][]byte) []*corev1.Secret {
		return []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "tickets"}, Data: data}}
	}
	for _, tc := range []struct {
		name     string
		config   map[string]string
		secrets  []*corev1.Secret
		want     [][]byte
		problems []string
	}{
		{"the ConfigMap's key", map[string]string{"ssl-session-ticket-key": b64(k80)}, nil, [][]byte{k80}, nil},
		{"the Secret's keys, raw and base64", map[string]string{"ssl-session-ticket-key-secret": "causeway/tickets"},
			secret(map[string][]byte{"tickets.key": k48, "tickets.previous.key": []byte(b64(k80) + "\n")}), [][]byte{k48, k80}, nil},
		{"the Secret wins", map[string]string{"ssl-session-ticket-key-secret": "causeway/tickets", "ssl-session-ticket-key": b64(k80)},
			secret(map[string][]byte{"tickets.key": k48}), [][]byte{k48}, []string{`"ssl-session-ticket-key" is ignored`}},
		{"a missing Secret", map[string]string{"ssl-session-ticket-key-secret": "causeway/tickets", "ssl-session-ticket-key": b64(k80)},
			nil, nil, []string{`"ssl-session-ticket-key" is ignored`, "Secret causeway/tickets not found"}},
		{"no tickets.key", map[string]string{"ssl-session-ticket-key-secret": "causeway/tickets"},
			secret(map[string][]byte{"tickets.previous.key": k48}), nil, []string{"has no key tickets.key"}},
		{"a key of another length", map[string]string{"ssl-session-ticket-key-secret": "causeway/tickets"},
			secret(map[string][]byte{"tickets.key": k48[:32]}), nil, []string{"tickets.key: want 48 or 80 bytes"}},
		{"base64 of another length", map[string]string{"ssl-session-ticket-key-secret": "causeway/tickets"},
			secret(map[string][]byte{"tickets.key": []byte(b64(k48[:32]))}), nil, []string{"tickets.key: holds 32 bytes"}},
		{"tickets off", map[string]string{"ssl-session-tickets": "false", "ssl-session-ticket-key": b64(k48)}, nil, [][]byte{k48},
			[]string{"no effect while ssl-session-tickets is false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := map[string]string{"ssl-session-tickets": "true"}
			maps.Copy(data, tc.config)
			m, problems := Build(&source.Snapshot{ConfigMaps: []*corev1.ConfigMap{configMap("causeway", "config", data)}, Secrets: tc.secrets}, testOpts)
			if !reflect.DeepEqual(m.TicketKeys, tc.want) {
				t.Errorf("keys %x, want %x", m.TicketKeys, tc.want)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems %v, want %q", problems, tc.problems)
			}
			for i, p := range problems {
				if !strings.Contains(p.Message, tc.problems[i]) {
					t.Errorf("problem %q, want %q", p.Message, tc.problems[i])
				}
			}
		})
	}
}

// TestGeoIP2Problems: use-geoip2 says why its variables stay empty: no
// module, or no database found.
func TestGeoIP2Problems(t *testing.T) {
	for _, tc := range []struct {
		name   string
		module bool
		dbs    []string
		want   string
	}{
		{"module and a database", true, []string{"GeoLite2-City"}, ""},
		{"no module", false, []string{"GeoLite2-City"}, "geoip2 module"},
		{"no database", true, nil, "no database of --maxmind-edition-ids"},
	} {
		opts := testOpts
		opts.GeoIP2Available, opts.GeoIP2Databases = tc.module, tc.dbs
		_, problems := Build(&source.Snapshot{ConfigMaps: []*corev1.ConfigMap{configMap("causeway", "config", map[string]string{"use-geoip2": "true"})}}, opts)
		got := problemsNaming(problems, `key "use-geoip2"`)
		if want := problemsNaming(problems, tc.want); tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || len(want) != 1) {
			t.Errorf("%s: problems %v, want one naming %q", tc.name, problems, tc.want)
		}
	}
}
