package owned_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/certmanager"
	"github.com/causeway/causeway/internal/owned"
)

type writerEnv struct {
	client   *dynamicfake.FakeDynamicClient
	recorder *record.FakeRecorder
	leader   atomic.Bool
	w        *owned.Writer
}

func newWriterEnv(t *testing.T, objs ...runtime.Object) *writerEnv {
	t.Helper()
	e := &writerEnv{recorder: record.NewFakeRecorder(100)}
	e.client = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{certmanager.CertificateGVR: "CertificateList"}, objs...)
	e.leader.Store(true)
	e.w = owned.NewWriter(owned.Options{Kind: certmanager.Kind, Client: e.client, IsLeader: e.leader.Load, Recorder: e.recorder})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// certificate waits for the Certificate ns/name to satisfy ok.
func (e *writerEnv) certificate(t *testing.T, name string, ok func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := e.client.Resource(certmanager.CertificateGVR).Namespace("shop").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && ok(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("Certificate shop/%s: %v, %v", name, c, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lists counts the list requests the writer made.
func (e *writerEnv) lists() int {
	n := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "list" {
			n++
		}
	}
	return n
}

// listed waits until the writer has made at least n list requests, and
// gives their count.
func (e *writerEnv) listed(t *testing.T, n int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for e.lists() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d list requests, want %d", e.lists(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return e.lists()
}

func (e *writerEnv) gone(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := e.client.Resource(certmanager.CertificateGVR).Namespace("shop").Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Certificate shop/%s is still there", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *writerEnv) event(t *testing.T, fragment string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev := <-e.recorder.Events:
			if strings.Contains(ev, fragment) {
				return
			}
		case <-timeout:
			t.Fatalf("no event with %q", fragment)
		}
	}
}

func issuer(c *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(c.Object, "spec", "issuerRef", "name")
	return s
}

func cafe(cm *nicv1.CertManager) *nicv1.VirtualServer {
	return &nicv1.VirtualServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cafe", UID: "vs-uid", Labels: map[string]string{"team": "coffee"}},
		Spec:       nicv1.VirtualServerSpec{Host: "cafe.example.com", TLS: &nicv1.TLS{Secret: "cafe-tls", CertManager: cm}},
	}
}

// TestWriter: the leader creates the Certificate, updates it when the
// VirtualServer changes, and deletes the one of a former tls.secret.
func TestWriter(t *testing.T) {
	e := newWriterEnv(t)
	vs := cafe(&nicv1.CertManager{ClusterIssuer: "le"})
	e.w.Observe([]*nicv1.VirtualServer{vs})
	e.certificate(t, "cafe-tls", func(c *unstructured.Unstructured) bool { return issuer(c) == "le" })
	e.event(t, "Normal CreateCertificate Successfully created Certificate \"cafe-tls\"")
	// The first write lists the namespace (no name written before is
	// known) after its event: wait for that list, so that it is not
	// counted against the update below.
	lists := e.listed(t, 1)
	vs = cafe(&nicv1.CertManager{ClusterIssuer: "other"})
	e.w.Observe([]*nicv1.VirtualServer{vs})
	e.certificate(t, "cafe-tls", func(c *unstructured.Unstructured) bool { return issuer(c) == "other" })
	e.event(t, "Normal UpdateCertificate")
	if got := e.lists(); got != lists {
		t.Errorf("an update of the same name listed the namespace (%d lists, before %d)", got, lists)
	}

	vs = cafe(&nicv1.CertManager{ClusterIssuer: "other"})
	vs.Spec.TLS.Secret = "cafe-tls-2"
	e.w.Observe([]*nicv1.VirtualServer{vs})
	e.certificate(t, "cafe-tls-2", func(*unstructured.Unstructured) bool { return true })
	e.gone(t, "cafe-tls")
	e.event(t, "Normal DeleteCertificate Successfully deleted unrequired Certificate \"cafe-tls\"")
}

// A Certificate of that name that the VirtualServer does not control is
// left alone, with a Warning; a follower writes nothing.
func TestWriterLeavesOthersAlone(t *testing.T) {
	theirs := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"namespace": "shop", "name": "cafe-tls"},
		"spec":     map[string]any{"secretName": "cafe-tls", "issuerRef": map[string]any{"name": "mine", "kind": "Issuer"}}}}
	e := newWriterEnv(t, theirs)
	e.w.Observe([]*nicv1.VirtualServer{cafe(&nicv1.CertManager{ClusterIssuer: "le"})})
	e.event(t, "Warning BadConfig Certificate \"cafe-tls\" exists and is not controlled by this VirtualServer")
	e.certificate(t, "cafe-tls", func(c *unstructured.Unstructured) bool { return issuer(c) == "mine" })

	f := newWriterEnv(t)
	f.leader.Store(false)
	f.w.Observe([]*nicv1.VirtualServer{cafe(&nicv1.CertManager{ClusterIssuer: "le"})})
	time.Sleep(200 * time.Millisecond)
	if l, err := f.client.Resource(certmanager.CertificateGVR).Namespace("shop").List(context.Background(), metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("a follower wrote %v (%v)", l, err)
	}
	f.leader.Store(true)
	f.w.Resync()
	f.certificate(t, "cafe-tls", func(*unstructured.Unstructured) bool { return true })
}

// Without the CRD the API server answers 404 to the create as well: the
// Warning says which CRD to install, and the writer retries.
func TestWriterWithoutTheCRD(t *testing.T) {
	e := newWriterEnv(t)
	var creates atomic.Int32
	e.client.PrependReactor("create", "certificates", func(k8stesting.Action) (bool, runtime.Object, error) {
		creates.Add(1)
		return true, nil, apierrors.NewNotFound(schema.GroupResource{}, "")
	})
	e.w.Observe([]*nicv1.VirtualServer{cafe(&nicv1.CertManager{ClusterIssuer: "le"})})
	e.event(t, "is the CustomResourceDefinition of certificates.cert-manager.io installed?")
	for deadline := time.Now().Add(5 * time.Second); creates.Load() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d creates, want a retry", creates.Load())
		}
	}
}

// A sync that leaves a VirtualServer's resourceVersion as it was does not
// ask Kind.Want again; a new resourceVersion, another object of the same
// name (UID) or a Resync does.
func TestWriterAsksOncePerResourceVersion(t *testing.T) {
	var asked atomic.Int32
	kind := certmanager.Kind
	want := kind.Want
	kind.Want = func(vs *nicv1.VirtualServer) (*unstructured.Unstructured, error) {
		asked.Add(1)
		return want(vs)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{certmanager.CertificateGVR: "CertificateList"})
	w := owned.NewWriter(owned.Options{Kind: kind, Client: client, IsLeader: func() bool { return true }, Recorder: record.NewFakeRecorder(100)})
	vs := cafe(&nicv1.CertManager{ClusterIssuer: "le"})
	vs.ResourceVersion = "7"
	for i, step := range []struct {
		change func(*nicv1.VirtualServer)
		resync bool
		asked  int32
	}{
		{asked: 1},
		{asked: 1},
		{change: func(v *nicv1.VirtualServer) { v.ResourceVersion = "8" }, asked: 2},
		{change: func(v *nicv1.VirtualServer) { v.UID = "other-uid" }, asked: 3},
		{resync: true, asked: 4},
		{change: func(v *nicv1.VirtualServer) { v.ResourceVersion = "" }, asked: 5},
		{asked: 6}, // no resourceVersion: asked at every sync
	} {
		vs = vs.DeepCopy()
		if step.change != nil {
			step.change(vs)
		}
		if step.resync {
			w.Resync()
		} else {
			w.Observe([]*nicv1.VirtualServer{vs})
		}
		if got := asked.Load(); got != step.asked {
			t.Fatalf("step %d: Want asked %d times, want %d", i, got, step.asked)
		}
	}
}

// TestWriterChangeBackDuringWrite: a VirtualServer that changes A → B → A
// while B is being written ends with A written, not B: what it wants is
// compared with what was written last, not with an older write.
func TestWriterChangeBackDuringWrite(t *testing.T) {
	e := newWriterEnv(t)
	a := cafe(&nicv1.CertManager{ClusterIssuer: "le"})
	e.w.Observe([]*nicv1.VirtualServer{a})
	e.certificate(t, "cafe-tls", func(c *unstructured.Unstructured) bool { return issuer(c) == "le" })

	entered, release := make(chan struct{}), make(chan struct{})
	var once atomic.Bool
	e.client.PrependReactor("update", "certificates", func(k8stesting.Action) (bool, runtime.Object, error) {
		if once.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
		return false, nil, nil // then the tracker writes it
	})
	b := cafe(&nicv1.CertManager{ClusterIssuer: "staging"})
	e.w.Observe([]*nicv1.VirtualServer{b})
	<-entered
	e.w.Observe([]*nicv1.VirtualServer{cafe(&nicv1.CertManager{ClusterIssuer: "le"})})
	close(release)
	// B's update, then A's again.
	e.certificate(t, "cafe-tls", func(c *unstructured.Unstructured) bool { return issuer(c) == "le" && e.updates() == 2 })
}

// updates counts the update requests the writer made.
func (e *writerEnv) updates() int {
	n := 0
	for _, a := range e.client.Actions() {
		if a.GetVerb() == "update" {
			n++
		}
	}
	return n
}
