package metrics

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

var testID = Identity{Namespace: "ingress", Class: "causeway", Pod: "causeway-0"}

// testCert is a self-signed ECDSA certificate bundle (certificate, then
// key) with the given serial and lifetime end.
func testCert(t *testing.T, serial int64, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	name := pkix.Name{CommonName: "Test CA", Organization: []string{"Causeway Tests"}}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: name, Issuer: name,
		NotBefore: notAfter.Add(-48 * time.Hour), NotAfter: notAfter,
	}, &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: name}, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})...)
}

// stubServer serves body at StubStatusPath on a unix socket.
func stubServer(t *testing.T, body string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(StubStatusPath, func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) })
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// series is one gathered sample: family, type, and its labels.
type series struct {
	typ    dto.MetricType
	labels map[string]string
	value  float64
}

func gather(t *testing.T, reg prometheus.Gatherer) map[string][]series {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]series{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			s := series{typ: mf.GetType(), labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				s.value = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				s.value = m.GetGauge().GetValue()
			}
			out[mf.GetName()] = append(out[mf.GetName()], s)
		}
	}
	return out
}

func labelNames(l map[string]string) []string {
	out := make([]string, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestCompatNames is the contract with ingress-nginx's dashboards: every
// metric's name, type and label names.
func TestCompatNames(t *testing.T) {
	m := NewWith(Options{Identity: testID})
	m.WatchNginx(os.Getpid)
	m.ScrapeStubStatus(stubServer(t, "Active connections: 1 \nserver accepts handled requests\n 2 2 3 \nReading: 0 Writing: 1 Waiting: 0 \n"))
	m.Registry.MustRegister(m.Compat.LeaderElection("causeway-leader", func() bool { return true }))
	m.Compat.Reloaded("abc")
	m.Compat.Certificates.Set([]ServedCertificate{{Host: "a.example", Namespace: "web", Name: "a-tls", PEM: testCert(t, 7, time.Now().Add(time.Hour))}})

	ctl := []string{"controller_class", "controller_namespace", "controller_pod"}
	cert := []string{"class", "host", "identifier", "namespace", "secret_name"}
	certInfo := []string{"class", "host", "identifier", "issuer_common_name", "issuer_organization", "namespace", "public_key_algorithm", "secret_name", "serial_number"}
	gauge, counter := dto.MetricType_GAUGE, dto.MetricType_COUNTER
	with := func(base []string, extra ...string) []string {
		out := append(slices.Clone(base), extra...)
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		name   string
		typ    dto.MetricType
		labels []string
		n      int // series
	}{
		{"config_hash", gauge, ctl, 1},
		{"config_last_reload_successful", gauge, ctl, 1},
		{"config_last_reload_successful_timestamp_seconds", gauge, ctl, 1},
		{"success", counter, ctl, 1},
		{"errors", counter, ctl, 1},
		{"build_info", gauge, with(ctl, "build", "release", "repository"), 1},
		{"leader_election_status", gauge, with(ctl, "name"), 1},
		{"ssl_expire_time_seconds", gauge, cert, 1},
		{"ssl_certificate_info", gauge, certInfo, 1},
		{"nginx_process_num_procs", gauge, ctl, 1},
		{"nginx_process_cpu_seconds_total", counter, ctl, 1},
		{"nginx_process_read_bytes_total", counter, ctl, 1},
		{"nginx_process_write_bytes_total", counter, ctl, 1},
		{"nginx_process_resident_memory_bytes", gauge, ctl, 1},
		{"nginx_process_virtual_memory_bytes", gauge, ctl, 1},
		{"nginx_process_oldest_start_time_seconds", gauge, ctl, 1},
		{"nginx_process_connections", gauge, with(ctl, "state"), 4},
		{"nginx_process_connections_total", counter, with(ctl, "state"), 2},
		{"nginx_process_requests_total", counter, ctl, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gather(t, m.Registry)[CompatPrefix+tc.name]
			if len(got) != tc.n {
				t.Fatalf("%d series, want %d", len(got), tc.n)
			}
			for _, s := range got {
				if s.typ != tc.typ {
					t.Errorf("type %v, want %v", s.typ, tc.typ)
				}
				if names := labelNames(s.labels); !slices.Equal(names, tc.labels) {
					t.Errorf("labels %v, want %v", names, tc.labels)
				}
				if v, ok := s.labels["controller_pod"]; ok && v != testID.Pod {
					t.Errorf("controller_pod %q, want %q", v, testID.Pod)
				}
			}
		})
	}
	// The causeway_* metrics stay.
	got := gather(t, m.Registry)
	for _, name := range []string{"causeway_nginx_last_reload_success", "causeway_config_apply_seconds"} {
		if len(got[name]) != 1 {
			t.Errorf("%s missing", name)
		}
	}
	for _, e := range got["causeway_metrics_collect_errors_total"] {
		if e.value != 0 {
			t.Errorf("collection errors: %+v", e)
		}
	}
}

func TestCompatReloads(t *testing.T) {
	type want struct{ ok, success, errors float64 }
	for _, tc := range []struct {
		name  string
		steps func(c *Compat)
		want  want
		hash  string // "" means 0
	}{
		{"nothing yet", func(*Compat) {}, want{0, 0, 0}, ""},
		{"a start", func(c *Compat) { c.Reloaded("v1") }, want{1, 1, 0}, "v1"},
		{"a refused change", func(c *Compat) { c.Reloaded("v1"); c.Failed() }, want{0, 1, 1}, ""},
		{"refused, then reverted without a reload", func(c *Compat) { c.Reloaded("v1"); c.Failed(); c.Unchanged("v1") }, want{1, 1, 1}, "v1"},
		{"refused, then fixed by a reload", func(c *Compat) { c.Reloaded("v1"); c.Failed(); c.Reloaded("v2") }, want{1, 2, 1}, "v2"},
		{"an apply with nothing to reload changes nothing", func(c *Compat) { c.Reloaded("v1"); c.Unchanged("v1") }, want{1, 1, 0}, "v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewWith(Options{Identity: testID})
			m.Compat.now = func() time.Time { return time.Unix(1700000000, 0) }
			tc.steps(m.Compat)
			g := gather(t, m.Registry)
			v := func(name string) float64 { return g[CompatPrefix+name][0].value }
			if got := (want{v("config_last_reload_successful"), v("success"), v("errors")}); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			wantHash := 0.0
			if tc.hash != "" {
				wantHash = ConfigHash(tc.hash)
			}
			if got := v("config_hash"); got != wantHash {
				t.Errorf("config_hash %v, want %v", got, wantHash)
			}
			if tc.want.success > 0 && v("config_last_reload_successful_timestamp_seconds") != 1700000000 {
				t.Errorf("timestamp %v", v("config_last_reload_successful_timestamp_seconds"))
			}
		})
	}
}

func TestConfigHash(t *testing.T) {
	a, b := ConfigHash("0123456789abcdef"), ConfigHash("0123456789abcdee")
	if a == b || a <= 0 || a >= 1<<53 || a != float64(uint64(a)) {
		t.Errorf("hashes %v and %v: want distinct exact positive integers below 2^53", a, b)
	}
	if ConfigHash("0123456789abcdef") != a {
		t.Error("not deterministic")
	}
}

func TestCertificates(t *testing.T) {
	notAfter := time.Unix(1900000000, 0)
	aPEM, bPEM := testCert(t, 7, notAfter), testCert(t, 8, notAfter.Add(time.Hour))
	type row struct{ host, secret string }
	for _, tc := range []struct {
		name    string
		sets    [][]ServedCertificate
		leading *bool
		want    []row // ssl_certificate_info series
		expiry  int   // ssl_expire_time_seconds series
		errs    float64
	}{
		{
			name: "two hosts, one secret",
			sets: [][]ServedCertificate{{{"a.example", "web", "a", aPEM}, {"b.example", "web", "a", aPEM}}},
			want: []row{{"a.example", "web/a"}, {"b.example", "web/a"}}, expiry: 2,
		},
		{
			name: "a host removed disappears",
			sets: [][]ServedCertificate{
				{{"a.example", "web", "a", aPEM}, {"b.example", "web", "b", bPEM}},
				{{"a.example", "web", "a", aPEM}},
			},
			want: []row{{"a.example", "web/a"}}, expiry: 1,
		},
		{
			name: "a renewed certificate replaces the old one",
			sets: [][]ServedCertificate{{{"a.example", "web", "a", aPEM}}, {{"a.example", "web", "a", bPEM}}},
			want: []row{{"a.example", "web/a"}}, expiry: 1,
		},
		{
			name: "a bundle that does not parse is counted and left out",
			sets: [][]ServedCertificate{{{"a.example", "web", "a", []byte("garbage")}, {"b.example", "web", "b", bPEM}}},
			want: []row{{"b.example", "web/b"}}, expiry: 1, errs: 1,
		},
		{
			name:    "a follower reports no expiry",
			sets:    [][]ServedCertificate{{{"a.example", "web", "a", aPEM}}},
			leading: new(bool),
			want:    []row{{"a.example", "web/a"}}, expiry: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewWith(Options{Identity: testID, Log: slog.New(slog.DiscardHandler)})
			if tc.leading != nil {
				m.Compat.Certificates.SetLeader(func() bool { return *tc.leading })
			}
			for _, s := range tc.sets {
				m.Compat.Certificates.Set(s)
			}
			g := gather(t, m.Registry)
			var got []row
			for _, s := range g[CompatPrefix+"ssl_certificate_info"] {
				got = append(got, row{s.labels["host"], s.labels["namespace"] + "/" + s.labels["secret_name"]})
				if s.labels["class"] != "causeway" || s.labels["issuer_organization"] != "Causeway Tests" ||
					s.labels["issuer_common_name"] != "Test CA" || s.labels["public_key_algorithm"] != "ECDSA" {
					t.Errorf("labels %v", s.labels)
				}
				if id := s.labels["identifier"]; id != "-"+s.labels["serial_number"] {
					t.Errorf("identifier %q, want the issuer's (empty) serialNumber, '-', the serial", id)
				}
			}
			sort.Slice(got, func(i, j int) bool { return got[i].host < got[j].host })
			if !slices.Equal(got, tc.want) {
				t.Errorf("info series %v, want %v", got, tc.want)
			}
			exp := g[CompatPrefix+"ssl_expire_time_seconds"]
			if len(exp) != tc.expiry {
				t.Fatalf("%d expiry series, want %d", len(exp), tc.expiry)
			}
			for _, s := range exp {
				want := notAfter.Unix()
				if s.labels["secret_name"] == "b" || strings.HasSuffix(tc.name, "old one") {
					want += 3600
				}
				if s.value != float64(want) {
					t.Errorf("%s expires %v, want %v", s.labels["host"], s.value, want)
				}
			}
			var errs float64
			for _, s := range g["causeway_metrics_collect_errors_total"] {
				if s.labels["collector"] == "certificates" {
					errs = s.value
				}
			}
			if errs != tc.errs {
				t.Errorf("%v errors, want %v", errs, tc.errs)
			}
		})
	}
}

func TestStubStatusFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		sock func(t *testing.T) string
	}{
		{"no socket", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none.sock") }},
		{"a page of another shape", func(t *testing.T) string { return stubServer(t, "Active connections: 1\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs strings.Builder
			m := NewWith(Options{Identity: testID, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			m.ScrapeStubStatus(tc.sock(t))
			if n := len(gather(t, m.Registry)[CompatPrefix+"nginx_process_connections"]); n != 0 {
				t.Errorf("%d connection series from a failed scrape", n)
			}
			// Collectors run concurrently: the first failure may count
			// after the counter was read, so it shows in the next scrape
			// (which fails too).
			errs := map[string]float64{}
			for _, e := range gather(t, m.Registry)["causeway_metrics_collect_errors_total"] {
				errs[e.labels["collector"]] = e.value
			}
			if errs["stub_status"] < 1 || errs["certificates"] != 0 || errs["nginx_process"] != 0 {
				t.Errorf("errors %v, want stub_status failures only", errs)
			}
			if !strings.Contains(logs.String(), "stub_status") {
				t.Errorf("failure not logged: %s", logs.String())
			}
		})
	}
}
