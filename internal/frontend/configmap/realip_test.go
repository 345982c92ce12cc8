package configmap

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// parseRealIP runs one key through Parse and returns the RealIP config and
// whether the value was refused (with a Problem naming the key).
func parseRealIP(t *testing.T, key, value string) (model.RealIP, bool) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "causeway"}, Data: map[string]string{key: value}}
	cfg, problems := Parse(cm)
	if len(problems) > 1 {
		t.Fatalf("%s=%q: %d problems, want at most one: %v", key, value, len(problems), problems)
	}
	if len(problems) == 1 && !strings.Contains(problems[0].Message, `key "`+key+`"`) {
		t.Fatalf("%s=%q: problem %q does not name the key", key, value, problems[0].Message)
	}
	return cfg.RealIP, len(problems) == 1
}

func TestRealIPBools(t *testing.T) {
	fields := map[string]func(model.RealIP) bool{
		"use-forwarded-headers":      func(r model.RealIP) bool { return r.UseForwardedHeaders },
		"enable-real-ip":             func(r model.RealIP) bool { return r.EnableRealIP },
		"compute-full-forwarded-for": func(r model.RealIP) bool { return r.ComputeFullForwardedFor },
		"use-proxy-protocol":         func(r model.RealIP) bool { return r.UseProxyProtocol },
	}
	for key, get := range fields {
		for _, tc := range []struct {
			v       string
			want    bool
			invalid bool
		}{
			{"true", true, false}, {"True", true, false}, {"TRUE", true, false}, {"1", true, false},
			{"false", false, false}, {"0", false, false}, {"f", false, false},
			{"", false, true}, {"yes", false, true}, {"on", false, true}, {" true", false, true}, {"true\n", false, true},
		} {
			r, invalid := parseRealIP(t, key, tc.v)
			if invalid != tc.invalid || get(r) != tc.want {
				t.Errorf("%s=%q: value %v invalid %v, want %v %v", key, tc.v, get(r), invalid, tc.want, tc.invalid)
			}
		}
		for _, v := range testcorpus.Injection {
			if r, invalid := parseRealIP(t, key, v); !invalid || get(r) {
				t.Errorf("%s=%q: accepted", key, v)
			}
		}
	}
}

func TestForwardedForHeader(t *testing.T) {
	for _, tc := range []struct {
		v, want string // want "" when refused
	}{
		{"X-Forwarded-For", "X-Forwarded-For"},
		{"x-forwarded-for", "X-Forwarded-For"},
		{"X-FORWARDED-FOR", "X-Forwarded-For"},
		{"x-real-ip", "X-Real-IP"},
		{"X-Client-IP", "X-Client-IP"},
		{"CF-Connecting-IP", "CF-Connecting-IP"},
		{"True-Client-IP", "True-Client-IP"},
		{strings.Repeat("a", 128), strings.Repeat("a", 128)},
		{strings.Repeat("a", 129), ""},
		{"", ""},
		{"proxy_protocol", ""},
		{"PROXY_PROTOCOL", ""},
		{"X_Forwarded_For", ""},
		{"X.Forwarded.For", ""},
		{"X-Forwarded-For;", ""},
		{"X-Forwarded-For proxy_protocol", ""},
		{"X-Forwarded-For\n", ""},
		{"$remote_addr", ""},
		{"X-Forwarded-For:", ""},
		{"\"X-Forwarded-For\"", ""},
		{"X-Forwarded-Før", ""},
	} {
		r, invalid := parseRealIP(t, "forwarded-for-header", tc.v)
		switch {
		case tc.want == "" && (!invalid || r.ForwardedForHeader != "X-Forwarded-For"):
			t.Errorf("%q: accepted as %q", tc.v, r.ForwardedForHeader)
		case tc.want != "" && (invalid || r.ForwardedForHeader != tc.want):
			t.Errorf("%q: got %q (invalid %v), want %q", tc.v, r.ForwardedForHeader, invalid, tc.want)
		}
	}
	for _, v := range testcorpus.Injection {
		if r, invalid := parseRealIP(t, "forwarded-for-header", v); !invalid && strings.ContainsAny(r.ForwardedForHeader, " ;{}$\"'\\#\n\r\t_") {
			t.Errorf("%q: accepted as %q", v, r.ForwardedForHeader)
		}
	}
}

func TestProxyRealIPCIDR(t *testing.T) {
	def := []string{"0.0.0.0/0"}
	for _, tc := range []struct {
		v    string
		want []string // nil when refused
	}{
		{"0.0.0.0/0", def},
		{"10.0.0.0/8", []string{"10.0.0.0/8"}},
		{"10.0.0.0/8,192.168.0.0/16", []string{"10.0.0.0/8", "192.168.0.0/16"}},
		{" 10.0.0.0/8 , 172.16.0.0/12 ,", []string{"10.0.0.0/8", "172.16.0.0/12"}},
		{"10.0.0.0/8,10.0.0.0/8", []string{"10.0.0.0/8"}},
		{"127.0.0.2", []string{"127.0.0.2/32"}},
		{"::/0", []string{"::/0"}},
		{"2001:db8::/32,0.0.0.0/0", []string{"2001:db8::/32", "0.0.0.0/0"}},
		{"2001:DB8::1", []string{"2001:db8::1/128"}},
		{"10.0.0.1/8", nil},
		{"10.0.0.0/33", nil},
		{"10.0.0.0/-1", nil},
		{"10.0.0/8", nil},
		{"010.0.0.0/8", nil},
		{"256.0.0.0/8", nil},
		{"fe80::1%eth0", nil},
		{"fe80::%eth0/64", nil},
		{"", nil},
		{",", nil},
		{" ", nil},
		{"10.0.0.0/8;", nil},
		{"10.0.0.0/8 1", nil},
		{"10.0.0.0/8\n", nil},
		{"10.0.0.0/8;\nset_real_ip_from 0.0.0.0/0", nil},
		{"10.0.0.0/8}", nil},
		{"unix:", nil},
		{"all", nil},
		{"localhost", nil},
		{"10.0.0.0/8 10.1.0.0/16", nil},
		{strings.Repeat("10.0.0.0/8,", 1001), []string{"10.0.0.0/8"}}, // duplicates count once
	} {
		r, invalid := parseRealIP(t, "proxy-real-ip-cidr", tc.v)
		got := make([]string, len(r.TrustedCIDRs))
		for i, p := range r.TrustedCIDRs {
			got[i] = p.String()
		}
		switch {
		case tc.want == nil && (!invalid || !slices.Equal(got, def)):
			t.Errorf("%q: accepted as %v", tc.v, got)
		case tc.want != nil && (invalid || !slices.Equal(got, tc.want)):
			t.Errorf("%q: got %v (invalid %v), want %v", tc.v, got, invalid, tc.want)
		}
	}
	var many []string
	for i := range 1001 {
		many = append(many, netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}).String()+"/24")
	}
	if _, invalid := parseRealIP(t, "proxy-real-ip-cidr", strings.Join(many[:1000], ",")); invalid {
		t.Error("1000 CIDRs refused")
	}
	if _, invalid := parseRealIP(t, "proxy-real-ip-cidr", strings.Join(many, ",")); !invalid {
		t.Error("1001 CIDRs accepted")
	}
	for _, v := range testcorpus.Injection {
		r, invalid := parseRealIP(t, "proxy-real-ip-cidr", v)
		for _, p := range r.TrustedCIDRs {
			if !invalid && (!p.IsValid() || p != p.Masked()) {
				t.Errorf("%q: accepted %v", v, p)
			}
		}
	}
}

func TestProxyProtocolHeaderTimeout(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Duration // 0 when refused
	}{
		{"5s", 5 * time.Second},
		{"10", 10 * time.Second},
		{"1m", time.Minute},
		{"1s", time.Second},
		{"1500ms", 2 * time.Second},
		{"24h", 24 * time.Hour},
		{"0", 0},
		{"0s", 0},
		{"500ms", 0},
		{"-5s", 0},
		{"25h", 0},
		{"", 0},
		{"5 s", 0},
		{"5s;", 0},
		{"5d", 0},
	} {
		r, invalid := parseRealIP(t, "proxy-protocol-header-timeout", tc.v)
		switch {
		case tc.want == 0 && (!invalid || r.ProxyProtocolHeaderTimeout != 5*time.Second):
			t.Errorf("%q: accepted as %s", tc.v, r.ProxyProtocolHeaderTimeout)
		case tc.want != 0 && (invalid || r.ProxyProtocolHeaderTimeout != tc.want):
			t.Errorf("%q: got %s (invalid %v), want %s", tc.v, r.ProxyProtocolHeaderTimeout, invalid, tc.want)
		}
	}
	for _, v := range testcorpus.Injection {
		if r, invalid := parseRealIP(t, "proxy-protocol-header-timeout", v); !invalid && (r.ProxyProtocolHeaderTimeout < time.Second || r.ProxyProtocolHeaderTimeout > 24*time.Hour) {
			t.Errorf("%q: accepted as %s", v, r.ProxyProtocolHeaderTimeout)
		}
	}
}

func TestRealIPDefaults(t *testing.T) {
	r, _ := Parse(nil)
	want := model.DefaultRealIP()
	if r.RealIP.Enabled() || r.RealIP.ForwardedForHeader != "X-Forwarded-For" || r.RealIP.ProxyProtocolHeaderTimeout != 5*time.Second ||
		!slices.Equal(r.RealIP.TrustedCIDRs, want.TrustedCIDRs) || want.TrustedCIDRs[0].String() != "0.0.0.0/0" {
		t.Errorf("defaults = %+v", r.RealIP)
	}
}
