package webhookcert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const cfgName = "causeway-admission"

var configsResource = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}

// clock is a settable Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// start makes a Keeper, adjusted by tune before it runs, and runs it
// until the test ends.
func start(t *testing.T, opts Options, tune ...func(*Keeper)) *Keeper {
	t.Helper()
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
		if testing.Verbose() {
			opts.Log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
		}
	}
	k, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	k.retryMin = 5 * time.Millisecond
	for _, f := range tune {
		f(k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return k
}

// logBuffer collects log output from any goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// eventually polls cond until it holds, failing the test after 3s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// watchStarted is closed once the keeper's watch is in place. The fake
// clientset's watch does not replay what happened between the list and
// the watch, as the API server would from the list's resourceVersion, so
// a test that counts on the watch must wait for it.
func watchStarted(client *fake.Clientset) <-chan struct{} {
	watching := make(chan struct{})
	var once sync.Once
	client.PrependWatchReactor("validatingwebhookconfigurations", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(a.GetResource(), a.GetNamespace())
		once.Do(func() { close(watching) })
		return true, w, err
	})
	return watching
}

func waitFor(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(3 * time.Second):
		t.Fatal("the keeper does not watch")
	}
}

// resynced returns once k has run a whole sync that started after the
// call: two rounds, since the first may have been under way already.
func resynced(t *testing.T, k *Keeper) {
	t.Helper()
	for range 2 {
		n := k.syncs.Load()
		k.poke()
		eventually(t, "the keeper syncs", func() bool { return k.syncs.Load() > n })
	}
}

func getConfig(t *testing.T, client *fake.Clientset) *admissionv1.ValidatingWebhookConfiguration {
	t.Helper()
	cfg, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), cfgName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func updateConfig(t *testing.T, client *fake.Clientset, cfg *admissionv1.ValidatingWebhookConfiguration) {
	t.Helper()
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(context.Background(), cfg, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// certsIn parses the certificates of a bundle, skipping what does not parse.
func certsIn(bundle []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for rest := bundle; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil {
			out = append(out, c)
		}
	}
}

// ourCAs are the CAs k says it has.
func ourCAs(t *testing.T, k *Keeper) []*x509.Certificate {
	t.Helper()
	cas := certsIn(k.CABundle())
	if len(cas) == 0 {
		t.Fatal("the keeper has no CA")
	}
	return cas
}

func served(t *testing.T, k *Keeper) *x509.Certificate {
	t.Helper()
	c, err := k.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Leaf
}

// verify checks that leaf is valid for every name against the roots in
// bundle.
func verify(t *testing.T, leaf *x509.Certificate, bundle []byte, now time.Time, names ...string) {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundle) {
		t.Fatalf("no certificate in bundle %q", bundle)
	}
	for _, n := range names {
		_, err := leaf.Verify(x509.VerifyOptions{
			DNSName:     n, // an IP address here is checked against the IP SANs
			Roots:       roots,
			CurrentTime: now,
			KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		if err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

func TestNew(t *testing.T) {
	client := fake.NewClientset()
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"configuration and client", Options{Client: client, Configuration: cfgName}, true},
		{"hosts only", Options{Hosts: []string{"localhost"}}, true},
		{"configuration without client", Options{Configuration: cfgName}, false},
		{"neither configuration nor hosts", Options{Client: client}, false},
		{"an empty host", Options{Client: client, Configuration: cfgName, Hosts: []string{" "}}, false},
		{"negative validity", Options{Hosts: []string{"x"}, Validity: -time.Hour}, false},
		{"tiny validity", Options{Hosts: []string{"x"}, Validity: time.Second}, false},
		{"negative grace", Options{Hosts: []string{"x"}, Grace: -time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			if (err == nil) != tc.ok {
				t.Errorf("New: %v", err)
			}
		})
	}
}

func TestServedCertificateVerifiesAgainstBundle(t *testing.T) {
	client := fake.NewClientset(configuration(cfgName,
		serviceHook("svc.causeway.io", "causeway-webhook", "ingress"),
		urlHook("name.causeway.io", "https://webhook.example.com:8443/validate"),
		urlHook("ip.causeway.io", "https://10.0.0.7:8443/validate"),
	))
	k := start(t, Options{Client: client, Configuration: cfgName, Hosts: []string{"localhost", "::1"}})
	eventually(t, "ready", k.Ready)

	leaf := served(t, k)
	names := []string{
		"causeway-webhook.ingress.svc", "causeway-webhook.ingress.svc.cluster.local",
		"causeway-webhook.ingress", "causeway-webhook",
		"webhook.example.com", "localhost", "10.0.0.7", "::1",
	}
	cfg := getConfig(t, client)
	for _, w := range cfg.Webhooks {
		verify(t, leaf, w.ClientConfig.CABundle, time.Now(), names...)
	}
	if len(leaf.IPAddresses) != 2 || !slices.Contains(leaf.DNSNames, "webhook.example.com") || slices.Contains(leaf.DNSNames, "10.0.0.7") {
		t.Errorf("IPs %v, DNS names %q: IP addresses must be IP SANs", leaf.IPAddresses, leaf.DNSNames)
	}

	ca := ourCAs(t, k)[0]
	if !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 || !strings.HasPrefix(ca.Subject.CommonName, "causeway-webhook-ca-") {
		t.Errorf("CA: IsCA %v, key usage %v, CN %q", ca.IsCA, ca.KeyUsage, ca.Subject.CommonName)
	}
	if !leaf.NotBefore.Equal(ca.NotBefore) || !leaf.NotAfter.Equal(ca.NotAfter) {
		t.Errorf("leaf valid %v..%v, CA %v..%v", leaf.NotBefore, leaf.NotAfter, ca.NotBefore, ca.NotAfter)
	}
	if d := ca.NotAfter.Sub(ca.NotBefore); d != defaultValidity+time.Minute {
		t.Errorf("CA valid for %v", d)
	}

	// And a real handshake through tls.Config.GetCertificate.
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(cfg.Webhooks[0].ClientConfig.CABundle)
	cConn, sConn := net.Pipe()
	defer cConn.Close()
	defer sConn.Close()
	go func() {
		_ = tls.Server(sConn, &tls.Config{GetCertificate: k.GetCertificate}).Handshake()
	}()
	client2 := tls.Client(cConn, &tls.Config{RootCAs: roots, ServerName: "causeway-webhook.ingress.svc"})
	if err := client2.Handshake(); err != nil {
		t.Errorf("handshake: %v", err)
	}
}

func TestBundleKeepsForeignAndMalformedPrunesExpired(t *testing.T) {
	now := time.Now()
	foreign := testCA(t, now, time.Hour)
	expired := testCA(t, now.Add(-2*time.Hour), time.Hour)
	old := pemOf(foreign) + notACert + brokenBlock + pemOf(expired)
	hook1 := serviceHook("one.causeway.io", "wh", "ns")
	hook1.ClientConfig.CABundle = []byte(old)
	hook2 := serviceHook("two.causeway.io", "wh", "ns")
	hook3 := urlHook("three.causeway.io", "https://wh.example/x")
	hook3.ClientConfig.CABundle = []byte(pemOf(foreign))
	client := fake.NewClientset(configuration(cfgName, hook1, hook2, hook3))
	var updates atomic.Int32
	client.PrependReactor("update", "validatingwebhookconfigurations", func(k8stesting.Action) (bool, runtime.Object, error) {
		updates.Add(1)
		return false, nil, nil
	})

	k := start(t, Options{Client: client, Configuration: cfgName})
	eventually(t, "ready", k.Ready)
	ours := ourCAs(t, k)[0]
	ourPEM := string(k.CABundle())

	cfg := getConfig(t, client)
	want := []string{
		pemOf(foreign) + notACert + brokenBlock + ourPEM,
		ourPEM,
		pemOf(foreign) + ourPEM,
	}
	for i, w := range cfg.Webhooks {
		if got := string(w.ClientConfig.CABundle); got != want[i] {
			t.Errorf("%s: caBundle\n%s\nwant\n%s", w.Name, got, want[i])
		}
		verify(t, served(t, k), w.ClientConfig.CABundle, time.Now(), "wh.ns.svc")
	}
	if !ours.Equal(certsIn(cfg.Webhooks[1].ClientConfig.CABundle)[0]) {
		t.Error("the bundle's CA is not the keeper's")
	}

	// Another look finds nothing to do: no second update, no duplicate.
	resynced(t, k)
	if n := updates.Load(); n != 1 {
		t.Errorf("%d updates, want 1", n)
	}
	if got := string(getConfig(t, client).Webhooks[0].ClientConfig.CABundle); got != want[0] {
		t.Errorf("after a resync, caBundle\n%s", got)
	}
}

func TestSecondReplicaAddsItsCA(t *testing.T) {
	client := fake.NewClientset(configuration(cfgName,
		serviceHook("one.causeway.io", "wh", "ns"), serviceHook("two.causeway.io", "wh", "ns")))
	first := start(t, Options{Client: client, Configuration: cfgName})
	eventually(t, "the first replica is ready", first.Ready)
	second := start(t, Options{Client: client, Configuration: cfgName})
	eventually(t, "the second replica is ready", second.Ready)

	a, b := ourCAs(t, first)[0], ourCAs(t, second)[0]
	if a.Equal(b) {
		t.Fatal("both replicas have the same CA")
	}
	// The first replica looks again and finds its CA still there.
	resynced(t, first)
	for _, w := range getConfig(t, client).Webhooks {
		cas := certsIn(w.ClientConfig.CABundle)
		if len(cas) != 2 || !cas[0].Equal(a) || !cas[1].Equal(b) {
			t.Errorf("%s: bundle holds %d certificates, want the first's CA then the second's", w.Name, len(cas))
		}
		verify(t, served(t, first), w.ClientConfig.CABundle, time.Now(), "wh.ns.svc")
		verify(t, served(t, second), w.ClientConfig.CABundle, time.Now(), "wh.ns.svc")
	}
}

func TestUpdateConflictIsRetried(t *testing.T) {
	client := fake.NewClientset(configuration(cfgName, serviceHook("one.causeway.io", "wh", "ns")))
	var conflicted atomic.Bool
	client.PrependReactor("update", "validatingwebhookconfigurations", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicted.CompareAndSwap(false, true) {
			return true, nil, apierrors.NewConflict(configsResource, cfgName, errors.New("the object has been modified"))
		}
		return false, nil, nil
	})
	var logs logBuffer
	k := start(t, Options{Client: client, Configuration: cfgName, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	eventually(t, "ready", k.Ready)

	// The retry read the object again before the second update, within
	// the same sync: the sync itself did not fail.
	var verbs []string
	for _, a := range client.Actions() {
		if a.GetVerb() == "get" || a.GetVerb() == "update" {
			verbs = append(verbs, a.GetVerb())
		}
	}
	if want := []string{"get", "update", "get", "update"}; len(verbs) < 4 || !slices.Equal(verbs[:4], want) {
		t.Errorf("calls %q, want %q first", verbs, want)
	}
	if got := logs.String(); !strings.Contains(got, "conflicted") || strings.Contains(got, "will retry") {
		t.Errorf("log:\n%s", got)
	}
	if !bundleHas(getConfig(t, client).Webhooks[0].ClientConfig.CABundle, ourCAs(t, k)[0].Raw) {
		t.Error("our CA is not in the bundle")
	}
}

func TestResetBundleIsRepairedByTheWatch(t *testing.T) {
	client := fake.NewClientset(configuration(cfgName,
		serviceHook("one.causeway.io", "wh", "ns"), serviceHook("two.causeway.io", "wh", "ns")))
	watching := watchStarted(client)
	k := start(t, Options{Client: client, Configuration: cfgName})
	eventually(t, "ready", k.Ready)
	waitFor(t, watching)
	ca := ourCAs(t, k)[0]

	// What `helm upgrade` does to a caBundle the chart leaves empty.
	cfg := getConfig(t, client)
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].ClientConfig.CABundle = nil
	}
	updateConfig(t, client, cfg)

	// Only the watch can repair it in time: the resync timer is a minute.
	eventually(t, "our CA is back in every entry", func() bool {
		for _, w := range getConfig(t, client).Webhooks {
			if !bundleHas(w.ClientConfig.CABundle, ca.Raw) {
				return false
			}
		}
		return true
	})
	eventually(t, "ready again", k.Ready)
}

func TestRotation(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &clock{now: t0}
	const grace = 50 * time.Millisecond
	client := fake.NewClientset(configuration(cfgName, serviceHook("one.causeway.io", "wh", "ns")))
	// Note when the bundle first holds two CAs: Grace runs from then.
	var mu sync.Mutex
	var twoCAsAt time.Time
	client.PrependReactor("update", "validatingwebhookconfigurations", func(a k8stesting.Action) (bool, runtime.Object, error) {
		cfg := a.(k8stesting.UpdateAction).GetObject().(*admissionv1.ValidatingWebhookConfiguration)
		mu.Lock()
		if twoCAsAt.IsZero() && len(certsIn(cfg.Webhooks[0].ClientConfig.CABundle)) == 2 {
			twoCAsAt = time.Now()
		}
		mu.Unlock()
		return false, nil, nil
	})
	k := start(t, Options{Client: client, Configuration: cfgName, Validity: 3 * time.Hour, Grace: grace, Now: clk.Now})
	eventually(t, "ready", k.Ready)
	old := ourCAs(t, k)[0]
	if !old.NotAfter.Equal(t0.Add(3 * time.Hour)) {
		t.Fatalf("CA expires %v", old.NotAfter)
	}
	bundle := func() []*x509.Certificate { return certsIn(getConfig(t, client).Webhooks[0].ClientConfig.CABundle) }

	// Still more than a third left: nothing happens.
	clk.Set(t0.Add(time.Hour + 59*time.Minute))
	resynced(t, k)
	if n := len(bundle()); n != 1 {
		t.Fatalf("%d CAs in the bundle before rotation is due", n)
	}

	// Less than a third left: a new CA joins the old one.
	clk.Set(t0.Add(2*time.Hour + time.Minute))
	resynced(t, k)
	cas := bundle()
	if len(cas) != 2 || !cas[0].Equal(old) {
		t.Fatalf("bundle holds %d CAs, want the old one and a new one", len(cas))
	}
	next := cas[1]
	if !next.NotAfter.Equal(t0.Add(5*time.Hour + time.Minute)) {
		t.Errorf("new CA expires %v", next.NotAfter)
	}

	// After Grace, and not before, the new certificate is served.
	eventually(t, "the new certificate is served", func() bool {
		return served(t, k).CheckSignatureFrom(next) == nil
	})
	switched := time.Now()
	mu.Lock()
	if d := switched.Sub(twoCAsAt); d < grace {
		t.Errorf("switched %v after the new CA went in the bundle, before Grace (%v)", d, grace)
	}
	mu.Unlock()
	verify(t, served(t, k), getConfig(t, client).Webhooks[0].ClientConfig.CABundle, clk.Now(), "wh.ns.svc")
	if cas := ourCAs(t, k); len(cas) != 1 || !cas[0].Equal(next) {
		t.Errorf("after the switch the keeper has %d CAs", len(cas))
	}

	// The old CA stays until it expires...
	clk.Set(old.NotAfter)
	resynced(t, k)
	if cas := bundle(); len(cas) != 2 {
		t.Fatalf("bundle holds %d CAs a moment before the old one expires", len(cas))
	}
	// ...and goes once it has.
	clk.Set(old.NotAfter.Add(time.Second))
	resynced(t, k)
	if cas := bundle(); len(cas) != 1 || !cas[0].Equal(next) {
		t.Fatalf("bundle holds %d CAs after the old one expired, want only the new one", len(cas))
	}
}

func TestReadyOnlyOnceTheBundleHoldsOurCA(t *testing.T) {
	client := fake.NewClientset(configuration(cfgName, serviceHook("one.causeway.io", "wh", "ns")))
	var failing atomic.Bool
	failing.Store(true)
	var attempts atomic.Int32
	client.PrependReactor("update", "validatingwebhookconfigurations", func(k8stesting.Action) (bool, runtime.Object, error) {
		attempts.Add(1)
		if failing.Load() {
			return true, nil, apierrors.NewServiceUnavailable("try later")
		}
		return false, nil, nil
	})
	k := start(t, Options{Client: client, Configuration: cfgName})
	eventually(t, "an update was tried", func() bool { return attempts.Load() > 0 })
	if _, err := k.GetCertificate(nil); err != nil {
		t.Errorf("no certificate served while the bundle is pending: %v", err)
	}
	if k.Ready() {
		t.Error("ready before the bundle holds our CA")
	}
	failing.Store(false)
	k.poke() // rather than wait out the backoff
	eventually(t, "ready", k.Ready)
}

func TestConfigurationCreatedLater(t *testing.T) {
	create := func(t *testing.T, client *fake.Clientset) {
		t.Helper()
		_, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(context.Background(),
			configuration(cfgName, serviceHook("one.causeway.io", "wh", "ns")), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("without hosts nothing is served until it exists", func(t *testing.T) {
		client := fake.NewClientset()
		watching := watchStarted(client)
		// Retries come a minute apart, so only the watch can be in time.
		k := start(t, Options{Client: client, Configuration: cfgName}, func(k *Keeper) { k.retryMin = time.Minute })
		eventually(t, "a first attempt", func() bool { return k.syncs.Load() > 0 })
		waitFor(t, watching)
		if _, err := k.GetCertificate(nil); err == nil {
			t.Error("a certificate before the configuration exists")
		}
		if k.Ready() {
			t.Error("ready")
		}
		create(t, client)
		eventually(t, "ready", k.Ready)
		verify(t, served(t, k), getConfig(t, client).Webhooks[0].ClientConfig.CABundle, time.Now(), "wh.ns.svc")
	})

	t.Run("with hosts they are served meanwhile", func(t *testing.T) {
		client := fake.NewClientset()
		k := start(t, Options{Client: client, Configuration: cfgName, Hosts: []string{"localhost"}})
		eventually(t, "a certificate", func() bool { _, err := k.GetCertificate(nil); return err == nil })
		if got := served(t, k).DNSNames; !slices.Equal(got, []string{"localhost"}) {
			t.Errorf("names %q", got)
		}
		if k.Ready() {
			t.Error("ready with no bundle to hold our CA")
		}
		ca := ourCAs(t, k)[0]
		create(t, client)
		eventually(t, "ready", k.Ready)
		leaf := served(t, k)
		verify(t, leaf, getConfig(t, client).Webhooks[0].ClientConfig.CABundle, time.Now(), "wh.ns.svc", "localhost")
		if leaf.CheckSignatureFrom(ca) != nil {
			t.Error("the new names should come from the same CA")
		}
	})
}

func TestNewNamesReissueFromTheSameCA(t *testing.T) {
	client := fake.NewClientset(configuration(cfgName, serviceHook("one.causeway.io", "wh", "ns")))
	watching := watchStarted(client)
	k := start(t, Options{Client: client, Configuration: cfgName})
	eventually(t, "ready", k.Ready)
	waitFor(t, watching)
	ca := ourCAs(t, k)[0]

	// Only the watch tells the keeper: the resync timer is a minute.
	cfg := getConfig(t, client)
	cfg.Webhooks[0].ClientConfig.Service.Name = "renamed"
	updateConfig(t, client, cfg)
	eventually(t, "the new name is served", func() bool {
		return slices.Contains(served(t, k).DNSNames, "renamed.ns.svc")
	})
	leaf := served(t, k)
	if slices.Contains(leaf.DNSNames, "wh.ns.svc") {
		t.Errorf("the old name is still in %q", leaf.DNSNames)
	}
	bundle := getConfig(t, client).Webhooks[0].ClientConfig.CABundle
	verify(t, leaf, bundle, time.Now(), "renamed.ns.svc")
	if cas := certsIn(bundle); len(cas) != 1 || !cas[0].Equal(ca) {
		t.Errorf("bundle holds %d CAs; a rename needs no new CA", len(cas))
	}
}

func TestWithoutConfiguration(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &clock{now: t0}
	k := start(t, Options{Hosts: []string{"localhost", "127.0.0.1"}, Validity: 3 * time.Hour,
		Grace: time.Millisecond, Now: clk.Now})
	eventually(t, "ready", k.Ready)
	verify(t, served(t, k), k.CABundle(), clk.Now(), "localhost", "127.0.0.1")
	old := ourCAs(t, k)[0]

	clk.Set(t0.Add(2*time.Hour + time.Minute))
	k.poke()
	eventually(t, "rotated", func() bool { return served(t, k).CheckSignatureFrom(old) != nil })
	verify(t, served(t, k), k.CABundle(), clk.Now(), "localhost", "127.0.0.1")
}
