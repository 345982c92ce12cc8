package balancer

import (
	"encoding/json"
	"testing"
)

// The wire form: nil endpoints become [], zero-valued options are omitted
// so the Lua defaults apply, and Ready is always sent.
func TestWireFormat(t *testing.T) {
	b := Backend{Key: "k", Endpoints: nil}
	got, err := json.Marshal(statePayload{SchemaVersion, 3, wireBackends([]Backend{b})})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"version":1,"generation":3,"backends":[{"key":"k","endpoints":[]}]}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e, _ := json.Marshal(Endpoint{Address: "10.0.0.1", Port: 80})
	if want := `{"address":"10.0.0.1","port":80,"ready":false}`; string(e) != want {
		t.Errorf("got  %s\nwant %s", e, want)
	}
	u, _ := json.Marshal(updatePayload{Version: 1, Generation: 4, Delete: []string{"x"}})
	if want := `{"version":1,"generation":4,"delete":["x"]}`; string(u) != want {
		t.Errorf("got  %s\nwant %s", u, want)
	}
}
