package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/causeway/causeway/internal/admission"
	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/source"
	"github.com/causeway/causeway/internal/tunnel/certs"
	"github.com/causeway/causeway/internal/webhookcert"
)

// webhookFlags configure the validating admission webhook.
type webhookFlags struct {
	address       string
	configuration string
	mode          string
	certFile      string
	keyFile       string
}

func (w *webhookFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&w.address, "validating-webhook-address", "", "HOST:PORT to serve validating admission reviews on (HTTPS, path "+admission.Path+", and ingress-nginx's "+admission.IngressNginxPath+"); empty turns the webhook off")
	fl.StringVar(&w.configuration, "validating-webhook-configuration", "", "name of the ValidatingWebhookConfiguration whose caBundle the controller keeps current with the CA of the serving certificate it generates and rotates itself")
	fl.StringVar(&w.mode, "validating-webhook-mode", string(admission.Deny), "deny: refuse an object that would raise a Problem; warn: admit it and return the Problems as warnings")
	fl.StringVar(&w.certFile, "validating-webhook-certificate", "", "serving certificate file (reloaded when it changes) instead of a generated one; the caBundle is then yours to set")
	fl.StringVar(&w.keyFile, "validating-webhook-key", "", "private key file of --validating-webhook-certificate")
}

func (w *webhookFlags) validate(manifests string) error {
	if w.address == "" {
		return nil
	}
	if _, port, err := net.SplitHostPort(w.address); err != nil || port == "" {
		return fmt.Errorf("--validating-webhook-address %q: want HOST:PORT", w.address)
	}
	if _, err := admission.ParseMode(w.mode); err != nil {
		return fmt.Errorf("--validating-webhook-mode %w", err)
	}
	if (w.certFile == "") != (w.keyFile == "") {
		return errors.New("--validating-webhook-certificate and --validating-webhook-key go together")
	}
	switch {
	case w.certFile != "" && w.configuration != "":
		return errors.New("--validating-webhook-configuration keeps the caBundle of a generated certificate; with --validating-webhook-certificate it is yours to set")
	case w.certFile == "" && w.configuration == "":
		return errors.New("--validating-webhook-address needs --validating-webhook-configuration (a generated certificate) or --validating-webhook-certificate and --validating-webhook-key")
	case w.configuration != "" && manifests != "":
		return errors.New("--validating-webhook-configuration needs the API server; with --manifests use --validating-webhook-certificate")
	}
	return nil
}

// webhook is the running admission webhook.
type webhook struct {
	reviewer *admission.Reviewer
	server   *http.Server
	ln       net.Listener
	keeper   *webhookcert.Keeper // nil with certificate files
	// pending holds the latest snapshot not indexed yet: indexing runs
	// beside the sync loop, never in it.
	pending chan *source.Snapshot
}

// newWebhook prepares the webhook; nil when it is off. The flags have
// passed validate.
func newWebhook(f *controllerFlags, opts build.Options, src source.Source, log *slog.Logger, reg prometheus.Registerer) (*webhook, error) {
	w := &f.webhook
	if w.address == "" {
		return nil, nil
	}
	mode, _ := admission.ParseMode(w.mode)
	fetcher, _ := src.(admission.Fetcher)
	scope, _ := src.(admission.Scope) // the files source reads every namespace
	wh := &webhook{reviewer: admission.NewReviewer(opts, fetcher, scope), pending: make(chan *source.Snapshot, 1)}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if w.certFile != "" {
		kp, err := certs.NewKeyPair(w.certFile, w.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--validating-webhook-certificate: %w", err)
		}
		tlsConfig.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return kp.Get() }
	} else {
		client, _, err := f.kubeClient()
		if err != nil {
			return nil, err
		}
		wh.keeper, err = webhookcert.New(webhookcert.Options{Client: client, Configuration: w.configuration,
			Log: log.With("component", "webhook-certificate")})
		if err != nil {
			return nil, err
		}
		tlsConfig.GetCertificate = wh.keeper.GetCertificate
	}
	reviews := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "causeway_admission_review_duration_seconds",
		Help:    "Time to answer a validating admission review, by outcome: allowed, warned, denied or error.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, 1},
	}, []string{"outcome"})
	if err := reg.Register(reviews); err != nil {
		return nil, err
	}
	mux := webhookMux(&admission.Handler{Reviewer: wh.reviewer, Mode: mode, Log: log.With("component", "webhook"),
		Observe: func(outcome string, d time.Duration) { reviews.WithLabelValues(outcome).Observe(d.Seconds()) }})
	ln, err := net.Listen("tcp", w.address)
	if err != nil {
		return nil, fmt.Errorf("--validating-webhook-address: %w", err)
	}
	wh.ln = tls.NewListener(ln, tlsConfig)
	wh.server = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 15 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	log.Info("validating admission webhook", "address", ln.Addr().String(), "path", admission.Path, "mode", mode,
		"configuration", w.configuration)
	return wh, nil
}

// webhookMux serves reviews at Causeway's path and at ingress-nginx's.
func webhookMux(reviews http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(admission.Path, reviews)
	mux.Handle(admission.IngressNginxPath, reviews)
	return mux
}

// start serves reviews and keeps the certificate until ctx ends; fatal
// errors go to errc.
func (wh *webhook) start(ctx context.Context, errc chan<- error) {
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case snap := <-wh.pending:
				wh.reviewer.Update(snap)
			}
		}
	}()
	if wh.keeper != nil {
		go func() {
			if err := wh.keeper.Run(ctx); err != nil {
				errc <- fmt.Errorf("webhook certificate: %w", err)
			}
		}()
	}
	go func() {
		if err := wh.server.Serve(wh.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("webhook: %w", err)
		}
	}()
}

// update hands each new snapshot to the indexing goroutine, replacing one
// still waiting. The sync loop is its only caller, so the send below never
// blocks.
func (wh *webhook) update(snap *source.Snapshot) {
	if wh == nil || snap == nil {
		return
	}
	select {
	case <-wh.pending:
	default:
	}
	wh.pending <- snap
}

func (wh *webhook) shutdown(ctx context.Context) {
	if wh != nil {
		wh.server.Shutdown(ctx)
	}
}
