package controller

import (
	"slices"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestServedCertificates(t *testing.T) {
	a := &model.TLSSecret{Namespace: "web", Name: "a", PEM: []byte("a")}
	def := &model.TLSSecret{Namespace: "ingress", Name: "default", PEM: []byte("d")}
	type row struct{ host, secret string }
	for _, tc := range []struct {
		name string
		m    *model.Model
		want []row
	}{
		{
			name: "a host with its own secret",
			m:    &model.Model{Secrets: []*model.TLSSecret{a}, Servers: []*model.Server{{Host: "a.example", TLS: &model.ServerTLS{Secret: "web/a"}}}},
			want: []row{{"a.example", "web/a"}},
		},
		{
			name: "a host without TLS has none",
			m:    &model.Model{Secrets: []*model.TLSSecret{a}, Servers: []*model.Server{{Host: "a.example"}}},
		},
		{
			name: "a TLS host falls back to --default-ssl-certificate, which also stands for the catch-all as _",
			m: &model.Model{Secrets: []*model.TLSSecret{def}, DefaultCertificate: "ingress/default",
				Servers: []*model.Server{{Host: ""}, {Host: "b.example", TLS: &model.ServerTLS{}}}},
			want: []row{{"b.example", "ingress/default"}, {"_", "ingress/default"}},
		},
		{
			name: "the self-generated certificate has no Secret and no series",
			m:    &model.Model{Servers: []*model.Server{{Host: "b.example", TLS: &model.ServerTLS{}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []row
			for _, s := range servedCertificates(tc.m) {
				got = append(got, row{s.Host, s.Namespace + "/" + s.Name})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
