package build

import (
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
	"github.com/causeway/causeway/internal/model"
)

// TestServerCiphers: ssl-ciphers and ssl-prefer-server-ciphers are a
// host's, the oldest Ingress's values win, and rules without a host
// ignore them with a Problem.
func TestServerCiphers(t *testing.T) {
	p := annotations.DefaultPrefix + "/"
	s := world(1)
	old := mkIngress("default", "old", 0, rule("a.test", path("/", "Prefix", svcName(0), 80)), rule("", path("/x", "Prefix", svcName(0), 80)))
	old.Annotations = map[string]string{p + "ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384", p + "ssl-prefer-server-ciphers": "false"}
	young := mkIngress("default", "young", 1, rule("a.test", path("/y", "Prefix", svcName(0), 80)))
	young.Annotations = map[string]string{p + "ssl-ciphers": "HIGH"}
	s.Ingresses = append(s.Ingresses, old, young)
	m, problems := Build(s, testOpts)
	pol := server(m, "a.test").Policy
	off := false
	if pol == nil || pol.SSLCiphers != "ECDHE-ECDSA-AES256-GCM-SHA384" || !reflect.DeepEqual(pol.PreferServerCiphers, &off) {
		t.Fatalf("a.test policy = %+v", pol)
	}
	if c := server(m, "").Policy; c != nil {
		t.Fatalf("catch-all policy = %+v, want none", c)
	}
	var got []string
	for _, pr := range problems {
		got = append(got, pr.Object.Name+" "+pr.Reason)
		if pr.Object.Name == "old" && !strings.Contains(pr.Message, "without a host") {
			t.Errorf("old: %s", pr.Message)
		}
	}
	want := []string{"old " + model.ReasonUnsupportedAnnotation, "old " + model.ReasonUnsupportedAnnotation, "young " + model.ReasonCollision}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("problems %v, want %v", got, want)
	}
}
