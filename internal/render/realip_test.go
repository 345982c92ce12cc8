package render

import (
	"net/netip"
	"testing"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// The generators re-validate: a model value that skipped the ConfigMap
// parser cannot reach nginx.conf.
func TestClientAddressRefusesBadModel(t *testing.T) {
	for _, bad := range []func(*model.RealIP){
		func(r *model.RealIP) { r.TrustedCIDRs = nil },
		func(r *model.RealIP) { r.TrustedCIDRs = []netip.Prefix{{}} },
		func(r *model.RealIP) {
			r.TrustedCIDRs = []netip.Prefix{netip.PrefixFrom(netip.MustParseAddr("10.0.0.1"), 8)}
		},
		func(r *model.RealIP) { r.ForwardedForHeader = "proxy_protocol" },
		func(r *model.RealIP) { r.ForwardedForHeader = "" },
	} {
		cfg := model.DefaultConfig()
		cfg.RealIP.UseForwardedHeaders = true
		bad(&cfg.RealIP)
		v := &mainView{Config: cfg}
		if out, err := v.ClientAddress(); err == nil {
			t.Errorf("%+v rendered as %+v", cfg.RealIP, out)
		}
	}
	for _, s := range testcorpus.Injection {
		cfg := model.DefaultConfig()
		cfg.RealIP.EnableRealIP = true
		cfg.RealIP.ForwardedForHeader = s
		if out, err := (&mainView{Config: cfg}).ClientAddress(); err == nil {
			if _, err := realIPHeaderName(out.RealIPHeader); err != nil {
				t.Errorf("%q rendered as %q", s, out.RealIPHeader)
			}
		}
	}
}

func TestClientAddressModes(t *testing.T) {
	cfg := model.DefaultConfig()
	if v, err := (&mainView{Config: cfg}).ClientAddress(); err != nil || v.RealIPHeader != "" || v.TrustForwarded || v.ProxyProtocol {
		t.Errorf("default: %+v, %v", v, err)
	}
	cfg.RealIP.UseProxyProtocol, cfg.RealIP.ForwardedForHeader = true, "X-Client-IP"
	if v, err := (&mainView{Config: cfg}).ClientAddress(); err != nil || v.RealIPHeader != "proxy_protocol" || v.Port != "$proxy_protocol_server_port" {
		t.Errorf("proxy protocol: %+v, %v", v, err)
	}
	cfg.RealIP.UseProxyProtocol, cfg.RealIP.EnableRealIP = false, true
	if v, err := (&mainView{Config: cfg}).ClientAddress(); err != nil || v.RealIPHeader != "X-Client-IP" || v.TrustForwarded || v.FullForwardedFor {
		t.Errorf("enable-real-ip: %+v, %v", v, err)
	}
	cfg.RealIP.ComputeFullForwardedFor = true // needs use-forwarded-headers
	if v, _ := (&mainView{Config: cfg}).ClientAddress(); v.FullForwardedFor {
		t.Errorf("compute-full-forwarded-for without use-forwarded-headers: %+v", v)
	}
}
