package controller

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/metrics"
	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/internal/runtime"
)

// recordingApplier keeps the last files and version it was given.
type recordingApplier struct {
	files   render.Files
	version string
}

func (a *recordingApplier) Apply(_ context.Context, files render.Files, version string) (runtime.ApplyResult, error) {
	a.files, a.version = files, version
	return runtime.ApplyResult{Reloaded: true}, nil
}

// TestStreamEndpointChangeReloads: in the Lua data plane, an endpoint
// change of an HTTP backend goes over the dynamic channel alone, but one
// of a backend a stream server uses changes the stream file and the
// configuration version, so the runtime reloads nginx: the stream module
// has no dynamic channel.
func TestStreamEndpointChangeReloads(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	if err := os.MkdirAll(dir.Path(layout.RunDir), 0o700); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(1)
	snap.Services = append(snap.Services, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}}}})
	dbSlice := func(addr string) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-1",
			Labels: map[string]string{discoveryv1.LabelServiceName: "db"}}, AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("pg"), Port: ptr.To(int32(5432)), Protocol: ptr.To(corev1.ProtocolTCP)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{addr}}}}
	}
	snap.EndpointSlices = append(snap.EndpointSlices, dbSlice("10.9.0.1"))
	snap.GlobalConfigurations = []*nicv1.GlobalConfiguration{{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "gc"},
		Spec: nicv1.GlobalConfigurationSpec{Listeners: []nicv1.Listener{{Name: "db", Port: 5432, Protocol: "TCP"}}}}}
	snap.TransportServers = []*nicv1.TransportServer{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"},
		Spec: nicv1.TransportServerSpec{Listener: nicv1.TransportServerListener{Name: "db", Protocol: "TCP"},
			Upstreams: []nicv1.TransportServerUpstream{{Name: "db", Service: "db", Port: 5432}},
			Action:    &nicv1.TransportServerAction{Pass: "db"}}}}
	src := &staticSource{snap: snap}
	app, p := &recordingApplier{}, &fakePusher{}
	c := New(Options{Source: src, Applier: app,
		Model: build.Options{Class: class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: "causeway"},
			GlobalConfiguration: "causeway/gc", StreamAvailable: true, HTTPPort: 80, HTTPSPort: 443},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Render:  render.Params{StateDir: dir, HTTPPort: 80, HTTPSPort: 443, Dynamic: &render.Dynamic{}},
		Dynamic: p})
	sync := func() (render.Files, string) {
		t.Helper()
		if err := c.Sync(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
		return app.files, app.version
	}
	stream := layout.StreamFile("db")
	files1, v1 := sync()
	if !bytes.Contains(files1[stream], []byte("server 10.9.0.1:5432 ")) {
		t.Fatalf("%s:\n%s", stream, files1[stream])
	}

	// An HTTP backend's endpoints: pushed, no file changes.
	pushes := p.pushes
	http := *snap
	http.EndpointSlices = append(snapshot(2).EndpointSlices[:0:0], snapshot(2).EndpointSlices...)
	http.EndpointSlices = append(http.EndpointSlices, dbSlice("10.9.0.1"))
	src.snap = &http
	_, v2 := sync()
	if v2 != v1 || p.pushes != pushes+1 {
		t.Fatalf("an HTTP endpoint change: version %s -> %s, pushes %d -> %d; want the same version and one push", v1, v2, pushes, p.pushes)
	}

	// The stream backend's endpoints: the file and the version change.
	db := http
	db.EndpointSlices = append(db.EndpointSlices[:len(db.EndpointSlices)-1:len(db.EndpointSlices)-1], dbSlice("10.9.0.2"))
	src.snap = &db
	files3, v3 := sync()
	if v3 == v2 || !bytes.Contains(files3[stream], []byte("server 10.9.0.2:5432 ")) || bytes.Contains(files3[stream], []byte("10.9.0.1")) {
		t.Fatalf("a stream endpoint change: version %s -> %s; %s:\n%s", v2, v3, stream, files3[stream])
	}
}
