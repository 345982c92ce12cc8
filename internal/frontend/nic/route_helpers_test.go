package nic

import (
	"strings"
	"testing"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
)

// translateRoute translates a VirtualServer of one route over upstreams
// a, b and c. With wantErr, it checks the rejection names it; with
// wantProblem, that the one Problem names it and the route is left out;
// both return nil. Otherwise it wants no Problem and returns the route.
func translateRoute(t *testing.T, r nicv1.Route, wantErr, wantProblem string) *Route {
	t.Helper()
	s := baseSpec()
	s.Upstreams = []nicv1.Upstream{{Name: "a", Service: "a", Port: 80}, {Name: "b", Service: "b", Port: 80}, {Name: "c", Service: "c", Port: 80}}
	s.Routes = []nicv1.Route{r}
	out, problems, err := TranslateVirtualServer(vs(s), nil)
	switch {
	case wantErr != "":
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err %v, want one with %q", err, wantErr)
		}
		return nil
	case err != nil:
		t.Fatal(err)
	case wantProblem != "":
		if len(problems) != 1 || !strings.Contains(problems[0].Message, wantProblem) || len(out.Routes) != 0 {
			t.Fatalf("problems %v routes %+v; want one with %q and the route left out", problems, out.Routes, wantProblem)
		}
		return nil
	case len(problems) != 0 || len(out.Routes) != 1:
		t.Fatalf("problems %v routes %+v", problems, out.Routes)
	}
	return &out.Routes[0]
}
