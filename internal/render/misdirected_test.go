package render

import (
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

// TestMisdirectedMaps: an HTTPS listener of several Gateway hostnames
// gets the three maps, numbered in order, the listener without a hostname
// as the default; its servers and its default server answer 421 when the
// maps say so; a listener of no hostnames, and a cleartext one, get
// neither; a hostname outside the grammar is refused.
func TestMisdirectedMaps(t *testing.T) {
	checked := &model.HTTPListener{Name: "gateway-20000", Port: 20000, SSL: true, Hostnames: []string{"", "*.wild.test", "second.test"}}
	plain := &model.HTTPListener{Name: "gateway-20001", Port: 20001, SSL: true}
	srv := &model.Server{Host: "second.test", TLS: &model.ServerTLS{Secret: "shop/tls"}, Listeners: &model.ServerListeners{HTTPS: checked},
		Locations: []*model.Location{loc(model.Prefix, "/", nil)}}
	other := &model.Server{Host: "other.test", TLS: &model.ServerTLS{Secret: "shop/tls"}, Listeners: &model.ServerListeners{HTTPS: plain},
		Locations: []*model.Location{loc(model.Prefix, "/", nil)}}
	m := policyModel(srv, other)
	m.Secrets = []*model.TLSSecret{{Namespace: "shop", Name: "tls", PEM: []byte("pem")}}
	m.HTTPListeners = []*model.HTTPListener{checked, plain}
	out, err := Render(m, goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	main := string(out.Files["nginx.conf"])
	for _, want := range []string{
		"map $ssl_server_name $causeway_sni_listener_20000 {\n        hostnames;\n        default 1;\n        \"\" -;\n        \"*.wild.test\" 2;\n        \"second.test\" 3;\n    }",
		"map $host $causeway_host_listener_20000 {\n        hostnames;\n        default 1;\n        \"*.wild.test\" 2;\n        \"second.test\" 3;\n    }",
		"map $causeway_sni_listener_20000:$causeway_host_listener_20000 $causeway_misdirected_20000 {",
	} {
		if !strings.Contains(main, want) {
			t.Errorf("nginx.conf lacks\n%s", want)
		}
	}
	if strings.Contains(main, "_listener_20001") {
		t.Error("a listener of no hostnames has maps")
	}
	const check = "if ($causeway_misdirected_20000) {\n"
	for name, f := range out.Files {
		switch {
		case strings.HasPrefix(name, "servers/second.test") && !strings.Contains(string(f), check):
			t.Errorf("%s does not check:\n%s", name, f)
		case strings.HasPrefix(name, "servers/other.test") && strings.Contains(string(f), "causeway_misdirected"):
			t.Errorf("%s checks:\n%s", name, f)
		}
	}
	// The default server of the listener (no server for every host).
	if !strings.Contains(main, "        "+check+"            return 421;") {
		t.Errorf("the listener's default server does not check:\n%s", main)
	}

	for _, bad := range []string{"a b.test", "x.*.test", "$host", "a\"b"} {
		l := &model.HTTPListener{Name: "gateway-20000", Port: 20000, SSL: true, Hostnames: []string{bad}}
		m := policyModel()
		m.HTTPListeners = []*model.HTTPListener{l}
		if _, err := Render(m, goldenParams); err == nil {
			t.Errorf("hostname %q rendered", bad)
		}
	}
}
