package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
)

// Path is where reviews are served, for every kind.
const Path = "/validate"

// IngressNginxPath is where ingress-nginx serves its reviews; they are
// served there too, so that a ValidatingWebhookConfiguration written for
// ingress-nginx (its chart's) works as it is.
const IngressNginxPath = "/networking/v1/ingresses"

// Mode says what a review does with Problems.
type Mode string

const (
	// Deny refuses an object that would raise a Problem, except that a
	// referenced object which does not exist yet is only a warning.
	Deny Mode = "deny"
	// Warn admits everything and returns the Problems as warnings.
	Warn Mode = "warn"
)

// ParseMode reads --validating-webhook-mode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Deny, Warn:
		return m, nil
	}
	return "", fmt.Errorf("%q: want deny or warn", s)
}

// maxBody bounds a review: an object is at most 1.5 MiB in etcd, and an
// update carries the old one too.
const maxBody = 4 << 20

// Limits of the answer, below what the API server accepts and shows.
const (
	maxWarnings   = 20
	maxWarning    = 512
	maxMessage    = 4096
	reviewTimeout = 8 * time.Second // the API server's default is 10 s
)

// Handler serves AdmissionReviews (admission.k8s.io/v1).
type Handler struct {
	Reviewer *Reviewer
	Mode     Mode
	Log      *slog.Logger
	// Observe, when set, is told each review's outcome ("allowed",
	// "denied", "warned", "error") and duration.
	Observe func(outcome string, d time.Duration)
}

// missing are the reasons that say a referenced object does not exist,
// or (for a VirtualServerRoute) does not reference it yet: usually it is
// being created beside the object, so it is no reason to refuse the
// object.
var missing = map[string]bool{
	model.ReasonMissingService:       true,
	model.ReasonMissingSecret:        true,
	model.ReasonMissingConfigMap:     true,
	model.ReasonDroppedEndpoints:     true,
	model.ReasonNoVirtualServerFound: true,
	model.ReasonIgnored:              true,
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	outcome := "error"
	defer func() {
		if h.Observe != nil {
			h.Observe(outcome, time.Since(start))
		}
	}()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "admission reviews are POSTed", http.StatusMethodNotAllowed)
		return
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		http.Error(w, "want Content-Type application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		http.Error(w, "reading the review: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxBody {
		http.Error(w, fmt.Sprintf("the review is larger than %d bytes", maxBody), http.StatusRequestEntityTooLarge)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, "not an AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if review.APIVersion != admissionv1.SchemeGroupVersion.String() || review.Kind != "AdmissionReview" || review.Request == nil {
		http.Error(w, "want an admission.k8s.io/v1 AdmissionReview with a request", http.StatusBadRequest)
		return
	}
	req := review.Request
	resp, status, err := h.review(r, req)
	if err != nil {
		h.log().Warn("admission review failed", "kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name, "err", err)
		// Not an answer: the API server applies the failurePolicy.
		http.Error(w, err.Error(), status)
		return
	}
	resp.UID = req.UID
	switch {
	case !resp.Allowed:
		outcome = "denied"
	case len(resp.Warnings) > 0:
		outcome = "warned"
	default:
		outcome = "allowed"
	}
	out, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.Default()
	}
	return h.Log
}

var (
	ingressKind       = metav1.GroupVersionKind{Group: networkingv1.GroupName, Version: "v1", Kind: "Ingress"}
	virtualServerKind = metav1.GroupVersionKind{Group: nicv1.GroupName, Version: "v1", Kind: "VirtualServer"}
	vsrKind           = metav1.GroupVersionKind{Group: nicv1.GroupName, Version: "v1", Kind: "VirtualServerRoute"}
	policyKind        = metav1.GroupVersionKind{Group: nicv1.GroupName, Version: "v1", Kind: "Policy"}
	tsKind            = metav1.GroupVersionKind{Group: nicv1.GroupName, Version: "v1", Kind: "TransportServer"}
	gcKind            = metav1.GroupVersionKind{Group: nicv1.GroupName, Version: "v1", Kind: "GlobalConfiguration"}

	// gatewayKinds are Gateway API's reviewed kinds, each with a new
	// object to decode into; their Problems are warnings only.
	gatewayKinds = map[metav1.GroupVersionKind]func() metav1.Object{
		{Group: gwv1.GroupName, Version: "v1", Kind: "Gateway"}:          func() metav1.Object { return &gwv1.Gateway{} },
		{Group: gwv1.GroupName, Version: "v1", Kind: "ListenerSet"}:      func() metav1.Object { return &gwv1.ListenerSet{} },
		{Group: gwv1.GroupName, Version: "v1", Kind: "HTTPRoute"}:        func() metav1.Object { return &gwv1.HTTPRoute{} },
		{Group: gwv1.GroupName, Version: "v1", Kind: "GRPCRoute"}:        func() metav1.Object { return &gwv1.GRPCRoute{} },
		{Group: gwv1.GroupName, Version: "v1", Kind: "TLSRoute"}:         func() metav1.Object { return &gwv1.TLSRoute{} },
		{Group: gwv1.GroupName, Version: "v1", Kind: "TCPRoute"}:         func() metav1.Object { return &gwv1.TCPRoute{} },
		{Group: gwv1.GroupName, Version: "v1", Kind: "UDPRoute"}:         func() metav1.Object { return &gwv1.UDPRoute{} },
		{Group: gwv1.GroupName, Version: "v1", Kind: "BackendTLSPolicy"}: func() metav1.Object { return &gwv1.BackendTLSPolicy{} },
	}
)

// review answers one request, or fails with an HTTP status.
func (h *Handler) review(r *http.Request, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, int, error) {
	allowed := &admissionv1.AdmissionResponse{Allowed: true}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return allowed, 0, nil
	}
	var (
		obj    metav1.Object
		kind   string
		review func(ctx context.Context) ([]model.Problem, bool, error)
		// warnOnly: Problems are warnings whatever the mode.
		warnOnly bool
	)
	switch newObj, gw := gatewayKinds[req.Kind]; {
	case gw:
		obj, kind, warnOnly = newObj(), req.Kind.Kind, true
		review = func(ctx context.Context) ([]model.Problem, bool, error) {
			return h.Reviewer.ReviewGatewayAPI(ctx, kind, obj)
		}
	}
	switch req.Kind {
	case ingressKind:
		ing := &networkingv1.Ingress{}
		obj, kind = ing, "Ingress"
		review = func(ctx context.Context) ([]model.Problem, bool, error) { return h.Reviewer.Review(ctx, ing) }
	case virtualServerKind:
		vs := &nicv1.VirtualServer{}
		obj, kind = vs, "VirtualServer"
		review = func(ctx context.Context) ([]model.Problem, bool, error) {
			return h.Reviewer.ReviewVirtualServer(ctx, vs)
		}
	case vsrKind:
		vsr := &nicv1.VirtualServerRoute{}
		obj, kind = vsr, "VirtualServerRoute"
		review = func(ctx context.Context) ([]model.Problem, bool, error) {
			return h.Reviewer.ReviewVirtualServerRoute(ctx, vsr)
		}
	case policyKind:
		pol := &nicv1.Policy{}
		obj, kind = pol, "Policy"
		review = func(ctx context.Context) ([]model.Problem, bool, error) { return h.Reviewer.ReviewPolicy(ctx, pol) }
	case tsKind:
		ts := &nicv1.TransportServer{}
		obj, kind = ts, "TransportServer"
		review = func(ctx context.Context) ([]model.Problem, bool, error) {
			return h.Reviewer.ReviewTransportServer(ctx, ts)
		}
	case gcKind:
		gc := &nicv1.GlobalConfiguration{}
		obj, kind = gc, "GlobalConfiguration"
		review = func(ctx context.Context) ([]model.Problem, bool, error) {
			return h.Reviewer.ReviewGlobalConfiguration(ctx, gc)
		}
	default:
		// Only these kinds have a front-end today; anything else sent
		// here is not ours to judge.
		if review == nil {
			return allowed, 0, nil
		}
	}
	if err := json.Unmarshal(req.Object.Raw, obj); err != nil {
		return &admissionv1.AdmissionResponse{Result: &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest,
			Reason: metav1.StatusReasonBadRequest, Message: "causeway: the object is not a" + article(kind) + " " + kind + ": " + err.Error()}}, 0, nil
	}
	// The request's own name and namespace are authoritative (a
	// generateName object has its name by now).
	if obj.GetNamespace() == "" {
		obj.SetNamespace(req.Namespace)
	}
	if obj.GetName() == "" {
		obj.SetName(req.Name)
	}
	ctx, cancel := context.WithTimeout(r.Context(), reviewTimeout)
	defer cancel()
	problems, ours, err := review(ctx)
	switch {
	case errors.Is(err, ErrNotSynced):
		return nil, http.StatusServiceUnavailable, err
	case err != nil:
		return nil, http.StatusBadGateway, fmt.Errorf("reading what the %s references: %w", kind, err)
	case !ours || len(problems) == 0:
		return allowed, 0, nil
	}
	var refuse, warn []string
	for _, p := range problems {
		line := p.Reason + ": " + p.Message
		if h.Mode == Deny && !missing[p.Reason] && !warnOnly {
			refuse = append(refuse, line)
		} else {
			warn = append(warn, line)
		}
	}
	resp := &admissionv1.AdmissionResponse{Allowed: len(refuse) == 0, Warnings: warnings(warn)}
	if len(refuse) > 0 {
		msg := fmt.Sprintf("causeway: %s %s/%s: %s", kind, obj.GetNamespace(), obj.GetName(), strings.Join(refuse, "; "))
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
			Reason: metav1.StatusReasonInvalid, Message: truncate(msg, maxMessage)}
	}
	h.log().Info("admission review", "kind", kind, "namespace", obj.GetNamespace(), "name", obj.GetName(), "operation", req.Operation,
		"allowed", resp.Allowed, "problems", len(problems))
	return resp, 0, nil
}

// article is " n" before a kind that starts with a vowel, else "".
func article(kind string) string {
	if strings.ContainsAny(kind[:1], "AEIOU") {
		return "n"
	}
	return ""
}

// warnings bounds the warnings of an answer: the API server shows them to
// the client one per line.
func warnings(lines []string) []string {
	var out []string
	for i, l := range lines {
		if i == maxWarnings {
			out = append(out, fmt.Sprintf("causeway: and %d more Problems", len(lines)-maxWarnings))
			break
		}
		out = append(out, truncate("causeway: "+l, maxWarning))
	}
	return out
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
