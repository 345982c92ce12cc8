// Package webhookcert gives the controller's validating admission webhook
// a serving certificate that the controller makes, publishes and rotates
// by itself, with no cert-manager and no certificate-generating Job.
//
// # Design
//
// A Keeper generates an ECDSA P-256 CA and a serving certificate signed by
// it, in memory. Neither private key is ever written anywhere: not to
// disk, not to a Secret. A restarted replica simply makes a new CA. What
// the API server needs in order to trust the webhook is only the CA
// certificate, and the Keeper writes that into the caBundle of every
// webhook entry of one ValidatingWebhookConfiguration.
//
// Several replicas may serve the webhook behind one Service, each with its
// own CA, so the caBundle is the union of the live CAs (concatenated PEM):
// a replica adds its own CA and removes only certificates that have
// expired. Everything else in the bundle stays as it is, including a CA a
// person put there and blocks that do not parse. Replicas therefore never
// need to agree on anything or share a secret; the price is that a
// replica that dies leaves its CA in the bundle until it expires.
//
// The Keeper watches the configuration and puts its CA back whenever it is
// missing (a `helm upgrade` that resets caBundle, say), and re-checks every
// minute in case a watch event was lost.
//
// When less than a third of a CA's validity is left, the Keeper makes a new
// CA and serving certificate, adds the new CA to the bundle beside the old
// one, waits Options.Grace so API servers pick up the new bundle, and only
// then serves the new certificate. The old CA stays in the bundle until it
// expires, so a handshake with the old certificate that is still under way
// keeps working. The serving certificate's names come from the
// configuration's clientConfigs, so it is re-issued (by the same CA) when
// they change.
//
// # RBAC
//
// With Options.Configuration set to NAME the Keeper needs exactly:
//
//	rules:
//	- apiGroups: ["admissionregistration.k8s.io"]
//	  resources: ["validatingwebhookconfigurations"]
//	  resourceNames: ["NAME"]
//	  verbs: ["get", "list", "watch", "update"]
//
// The list and watch carry the field selector metadata.name=NAME, which is
// what lets resourceNames restrict them. It never creates, patches or
// deletes the configuration: a Helm chart or manifest creates it.
package webhookcert

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	admissionclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

// FieldManager names the controller in managedFields of what it writes.
const FieldManager = "causeway"

const (
	defaultValidity = 30 * 24 * time.Hour
	defaultGrace    = 10 * time.Second
	// defaultResync is how often the bundle is re-checked without a watch
	// event; also the longest wait between retries.
	defaultResync = time.Minute
	// defaultRetryMin is the first wait after a failed attempt; it doubles
	// up to the resync interval.
	defaultRetryMin = time.Second
	// syncTimeout bounds one round of API calls.
	syncTimeout = 30 * time.Second
)

// Options configure a Keeper.
type Options struct {
	// Client talks to the API server; required when Configuration is set.
	Client kubernetes.Interface
	// Configuration names the ValidatingWebhookConfiguration whose
	// caBundles hold our CA, and whose clientConfigs name the serving
	// certificate. Empty means there is none to keep: then Hosts must not
	// be empty, and the CA is only available from Keeper.CABundle.
	Configuration string
	// Hosts are extra DNS names or IP addresses for the serving
	// certificate.
	Hosts []string
	// Validity is the lifetime of each CA and serving certificate; zero
	// means 30 days. A new pair is made when less than a third is left.
	Validity time.Duration
	// Grace is how long after the new CA is in the bundle the new serving
	// certificate is put in use; zero means 10s.
	Grace time.Duration
	Log   *slog.Logger
	// Now tells the time, for tests; nil means time.Now. It dates the
	// certificates and decides expiry and rotation; Grace and the retry
	// intervals run on the real clock.
	Now func() time.Time
}

// Keeper keeps a serving certificate for the webhook and its CA in the
// configuration's caBundle. GetCertificate and Ready may be called from any
// goroutine; everything else happens in Run.
type Keeper struct {
	opts Options
	log  *slog.Logger

	served atomic.Pointer[tls.Certificate]
	ready  atomic.Bool
	wanted atomic.Pointer[wanted] // what the watch checks the configuration against
	wake   chan struct{}
	ran    atomic.Bool
	syncs  atomic.Int64 // finished sync attempts, for tests

	// Used only by Run's goroutine.
	active          *authority  // the one whose certificate is served
	next            *authority  // made at rotation, served once Grace has passed
	graceTimer      *time.Timer // runs from when next's CA is in the bundle
	waitingForNames bool        // logged that there are no names yet
	warnedMalformed bool
	lastSkipped     string
	resync          time.Duration
	retryMin        time.Duration
}

// wanted is what the configuration should show: our live CAs (DER, oldest
// first) in every entry, and clientConfigs that give the names we serve.
type wanted struct {
	cas   [][]byte
	names nameSet
}

// New checks opts and returns a Keeper; Run starts it.
func New(opts Options) (*Keeper, error) {
	if opts.Configuration != "" && opts.Client == nil {
		return nil, errors.New("webhookcert: a Client is needed to keep a ValidatingWebhookConfiguration")
	}
	if opts.Configuration == "" && len(opts.Hosts) == 0 {
		return nil, errors.New("webhookcert: with no ValidatingWebhookConfiguration, Hosts must name the serving certificate")
	}
	for _, h := range opts.Hosts {
		if !(&nameBuilder{}).add(h) {
			return nil, fmt.Errorf("webhookcert: empty host in %q", opts.Hosts)
		}
	}
	if opts.Validity < 0 || opts.Grace < 0 {
		return nil, errors.New("webhookcert: Validity and Grace must not be negative")
	}
	if opts.Validity == 0 {
		opts.Validity = defaultValidity
	}
	if opts.Validity < time.Minute {
		return nil, fmt.Errorf("webhookcert: Validity %s is too short", opts.Validity)
	}
	if opts.Grace == 0 {
		opts.Grace = defaultGrace
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Hosts = slices.Clone(opts.Hosts) // read by the watch's goroutine
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	log := opts.Log.With("component", "webhookcert")
	if opts.Configuration != "" {
		log = log.With("configuration", opts.Configuration)
	}
	return &Keeper{
		opts:     opts,
		log:      log,
		wake:     make(chan struct{}, 1),
		resync:   defaultResync,
		retryMin: defaultRetryMin,
	}, nil
}

var errNoCertificate = errors.New("webhookcert: no serving certificate yet")

// GetCertificate is for tls.Config.GetCertificate: the current serving
// certificate, or an error before there is one.
func (k *Keeper) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := k.served.Load(); c != nil {
		return c, nil
	}
	return nil, errNoCertificate
}

// Ready reports whether a certificate is served and, when there is a
// configuration to keep, its CA was in every entry's caBundle when last
// looked at. It turns false when our CA is found missing and true again
// once it is put back; it stays as it was while the configuration cannot
// be read (or is gone), since the CA may well still be trusted.
func (k *Keeper) Ready() bool {
	return k.served.Load() != nil && k.ready.Load()
}

// CABundle is the PEM of this Keeper's live CAs (one, or two during a
// rotation), or nil before there is one. With no configuration to keep,
// this is how to learn which CA to trust.
func (k *Keeper) CABundle() []byte {
	w := k.wanted.Load()
	if w == nil {
		return nil
	}
	var b bytes.Buffer
	for _, der := range w.cas {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	return b.Bytes()
}

// poke makes Run look again now.
func (k *Keeper) poke() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// Run makes the certificates, keeps the bundle and rotates, until ctx ends;
// then it returns nil. It may be called once.
func (k *Keeper) Run(ctx context.Context) error {
	if !k.ran.CompareAndSwap(false, true) {
		return errors.New("webhookcert: Run called twice")
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	if k.opts.Configuration != "" {
		_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
			ListerWatcher: k.listWatch(),
			ObjectType:    &admissionv1.ValidatingWebhookConfiguration{},
			Handler: cache.ResourceEventHandlerFuncs{
				AddFunc:    k.observe,
				UpdateFunc: func(_, obj any) { k.observe(obj) },
				DeleteFunc: func(any) { k.poke() },
			},
		})
		wg.Go(func() { informer.RunWithContext(ctx) })
	}
	defer func() {
		if k.graceTimer != nil {
			k.graceTimer.Stop()
		}
	}()

	var backoff time.Duration
	for {
		wait := k.resync
		if err := k.sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			backoff = min(max(2*backoff, k.retryMin), k.resync)
			wait = backoff
			k.log.Warn("webhook certificate: will retry", "error", err, "in", backoff)
		} else {
			backoff = 0
			if d, ok := k.untilRotation(); ok && d < wait {
				wait = max(d, 0)
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-k.wake:
		case <-timer.C:
		case <-k.graceC():
			k.promote()
		}
		timer.Stop()
	}
}

func (k *Keeper) configs() admissionclient.ValidatingWebhookConfigurationInterface {
	return k.opts.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
}

// listWatch lists and watches the one configuration by name, so that RBAC
// can limit list and watch to that resourceName. It tells the reflector
// whether the client can stream its list as a watch (client-go's
// WatchListClient): a fake client of the tests cannot.
func (k *Keeper) listWatch() cache.ListerWatcher {
	selector := fields.OneTermEqualSelector("metadata.name", k.opts.Configuration).String()
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = selector
			return k.configs().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return k.configs().Watch(ctx, o)
		},
	}, k.opts.Client)
}

// observe wakes Run when the configuration, as the watch shows it, lacks
// one of our CAs or asks for names we do not serve.
func (k *Keeper) observe(obj any) {
	cfg, ok := obj.(*admissionv1.ValidatingWebhookConfiguration)
	if !ok || cfg.Name != k.opts.Configuration {
		return
	}
	w := k.wanted.Load()
	if w == nil {
		k.poke() // waiting for the configuration to exist
		return
	}
	if names, _ := namesFor(cfg, k.opts.Hosts); !names.empty() && !names.equal(w.names) {
		k.poke()
		return
	}
	for _, wh := range cfg.Webhooks {
		for _, der := range w.cas {
			if !bundleHas(wh.ClientConfig.CABundle, der) {
				k.poke()
				return
			}
		}
	}
}

// untilRotation is how long until the active CA is due to be replaced; it
// reports false when there is nothing to rotate or rotation is under way.
func (k *Keeper) untilRotation() (time.Duration, bool) {
	if k.active == nil || k.next != nil {
		return 0, false
	}
	return k.rotateAt(k.active).Sub(k.opts.Now()), true
}

// rotateAt is when a has a third of its validity left.
func (k *Keeper) rotateAt(a *authority) time.Time {
	return a.ca.NotAfter.Add(-k.opts.Validity / 3)
}

func (k *Keeper) graceC() <-chan time.Time {
	if k.graceTimer == nil {
		return nil
	}
	return k.graceTimer.C
}

// sync is one round: read the configuration, make or re-issue what is
// due, and make sure every entry's caBundle holds our CAs.
func (k *Keeper) sync(ctx context.Context) error {
	defer k.syncs.Add(1)
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	now := k.opts.Now()

	var cfg *admissionv1.ValidatingWebhookConfiguration
	if k.opts.Configuration != "" {
		c, err := k.configs().Get(ctx, k.opts.Configuration, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) && k.active == nil && len(k.opts.Hosts) > 0 {
				// Serve for Hosts meanwhile; the bundle comes when it exists.
				if err := k.certify(nil, now); err != nil {
					return err
				}
			}
			return fmt.Errorf("reading ValidatingWebhookConfiguration %s: %w", k.opts.Configuration, err)
		}
		cfg = c
	}
	if err := k.certify(cfg, now); err != nil {
		return err
	}
	if k.active == nil {
		return nil // no names to serve; the watch says when that changes
	}
	if cfg == nil {
		// No bundle to keep: our CAs count as published as soon as made.
		k.ready.Store(true)
		if k.next != nil && k.graceTimer == nil {
			k.graceTimer = time.NewTimer(k.opts.Grace)
		}
		return nil
	}
	return k.publish(ctx, cfg, now)
}

// certify makes the first CA, re-issues serving certificates whose names
// no longer match cfg (nil when there is none), and starts a rotation
// when one is due.
func (k *Keeper) certify(cfg *admissionv1.ValidatingWebhookConfiguration, now time.Time) error {
	names, skipped := namesFor(cfg, k.opts.Hosts)
	if s := fmt.Sprint(skipped); len(skipped) > 0 && s != k.lastSkipped {
		k.log.Warn("webhook certificate: skipping clientConfigs with no host", "skipped", skipped)
		k.lastSkipped = s
	}
	if names.empty() {
		if k.active == nil {
			// Nothing to name a certificate for (no webhooks yet).
			if !k.waitingForNames {
				k.log.Warn("webhook certificate: the configuration names no service or url and Hosts is empty; waiting")
				k.waitingForNames = true
			}
			return nil
		}
		// The webhooks are gone; keep serving (and rotating) what we have.
		names = k.active.names
	}
	k.waitingForNames = false

	if k.active == nil {
		a, err := newAuthority(now, k.opts.Validity, names)
		if err != nil {
			return err
		}
		k.active = a
		k.log.Info("webhook certificate generated", "ca", a.ca.Subject.CommonName,
			"notAfter", a.ca.NotAfter, "names", names.String())
	} else {
		for _, a := range []*authority{k.active, k.next} {
			if a == nil || a.names.equal(names) {
				continue
			}
			// The same CA, so the new certificate of the active one is
			// trusted already and is served at once.
			if err := a.issue(names); err != nil {
				return err
			}
			k.log.Info("webhook certificate re-issued for new names", "ca", a.ca.Subject.CommonName,
				"names", names.String())
		}
	}

	if k.next == nil && !now.Before(k.rotateAt(k.active)) {
		a, err := newAuthority(now, k.opts.Validity, names)
		if err != nil {
			return err
		}
		k.next = a
		k.log.Info("webhook certificate rotation started", "oldCA", k.active.ca.Subject.CommonName,
			"oldNotAfter", k.active.ca.NotAfter, "newCA", a.ca.Subject.CommonName, "newNotAfter", a.ca.NotAfter)
	}
	k.publishActive()
	return nil
}

// publishActive makes what Run decided visible to other goroutines: first
// our CAs and names, then the serving certificate, so that CABundle holds
// the CA of any certificate GetCertificate has returned.
func (k *Keeper) publishActive() {
	w := &wanted{names: k.active.names}
	for _, a := range []*authority{k.active, k.next} {
		if a != nil {
			w.cas = append(w.cas, a.ca.Raw)
		}
	}
	k.wanted.Store(w)
	k.served.Store(k.active.leaf)
}

// promote serves the next certificate once Grace has passed.
func (k *Keeper) promote() {
	k.graceTimer = nil
	if k.next == nil {
		return
	}
	old := k.active
	k.active, k.next = k.next, nil
	k.publishActive()
	k.log.Info("webhook certificate rotated", "ca", k.active.ca.Subject.CommonName,
		"notAfter", k.active.ca.NotAfter, "oldCA", old.ca.Subject.CommonName,
		"oldNotAfter", old.ca.NotAfter)
}

// publish makes every entry's caBundle hold our CAs and no expired
// certificate, updating cfg (and re-reading it on a conflict) when that
// changes anything.
func (k *Keeper) publish(ctx context.Context, cfg *admissionv1.ValidatingWebhookConfiguration, now time.Time) error {
	ours := k.wanted.Load().cas
	attempt := 0
	nextWasMissing := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		attempt++
		if attempt > 1 {
			k.log.Warn("webhook caBundle update conflicted; reading the configuration again", "attempt", attempt)
			c, err := k.configs().Get(ctx, k.opts.Configuration, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cfg = c
		} else {
			cfg = cfg.DeepCopy()
		}
		changed, malformed := false, false
		for i := range cfg.Webhooks {
			cc := &cfg.Webhooks[i].ClientConfig
			if !bundleHas(cc.CABundle, k.active.ca.Raw) {
				k.ready.Store(false)
			}
			if k.next != nil && !bundleHas(cc.CABundle, k.next.ca.Raw) {
				nextWasMissing = true
			}
			merged, bad := mergeBundle(cc.CABundle, ours, now)
			malformed = malformed || bad
			if !bytes.Equal(merged, cc.CABundle) {
				cc.CABundle = merged
				changed = true
			}
		}
		if malformed && !k.warnedMalformed {
			k.log.Warn("webhook caBundle holds something that is not a readable certificate; leaving it as it is")
			k.warnedMalformed = true
		}
		if !changed {
			return nil
		}
		updated, err := k.configs().Update(ctx, cfg, metav1.UpdateOptions{FieldManager: FieldManager})
		if err != nil {
			return err
		}
		k.log.Info("webhook caBundle updated", "webhooks", len(updated.Webhooks),
			"resourceVersion", updated.ResourceVersion)
		return nil
	})
	if err != nil {
		return fmt.Errorf("updating caBundle of ValidatingWebhookConfiguration %s: %w", k.opts.Configuration, err)
	}
	k.ready.Store(true)
	// Grace runs from when the new CA is in the bundle; if it went missing
	// meanwhile, it starts again.
	if k.next != nil && (k.graceTimer == nil || nextWasMissing) {
		if k.graceTimer != nil {
			k.graceTimer.Stop()
		}
		k.graceTimer = time.NewTimer(k.opts.Grace)
	}
	return nil
}
