package gateway

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/model"
)

// BackendTLSPolicies, in the model's terms. A policy targets a Service
// (every port) or one port of it by name (sectionName); the route targets
// that reach such a Service port speak TLS to it: model.UpstreamTLS with
// the policy's CA (a ConfigMap's ca.crt, or the system's bundle) and its
// hostname as SNI and the name the certificate is checked against. A
// policy that cannot be honoured as written still claims its targets, and
// their shares answer 503: never cleartext, nor an unverified connection,
// where TLS was asked for.

// KindBackendTLSPolicy is the kind as Problems name it.
const KindBackendTLSPolicy = "BackendTLSPolicy"

// Bounds beyond the API's (the files source skips its validation).
const (
	maxPolicyTargets = 16
	maxPolicyCARefs  = 8
)

// BackendTLSPolicy is one policy's outcome.
type BackendTLSPolicy struct {
	Ref        model.ObjectRef
	Generation int64
	Created    time.Time
	// TLS is what the targets' connections use; nil when the policy is
	// not honoured: its targets' shares answer 503.
	TLS *model.UpstreamTLS
	// Accepted and ResolvedRefs are its conditions (without generation
	// and time), for every ancestor.
	Accepted, ResolvedRefs metav1.Condition
	// lostTo are the policies that took precedence over this one on a
	// target (Conflicted).
	lostTo []*BackendTLSPolicy
	// Ancestors are the Gateways whose routes reach a Service port the
	// policy targets (Ancestors fills it).
	Ancestors []model.ObjectRef
}

// policyTarget is a Service, or one port of it by name.
type policyTarget struct {
	namespace, service, section string
}

// BackendTLS is every BackendTLSPolicy's outcome and which applies where.
type BackendTLS struct {
	// Policies are all the policies, in the order given.
	Policies []*BackendTLSPolicy
	winners  map[policyTarget]*BackendTLSPolicy
}

// For is the policy that applies to port portName of Service
// namespace/service: the one naming that port, else the one naming the
// whole Service; nil when none does.
func (bt *BackendTLS) For(namespace, service, portName string) *BackendTLSPolicy {
	if bt == nil {
		return nil
	}
	if portName != "" {
		if p := bt.winners[policyTarget{namespace, service, portName}]; p != nil {
			return p
		}
	}
	return bt.winners[policyTarget{namespace, service, ""}]
}

// CACheck validates the ConfigMap namespace/name as a CA bundle (its key
// ca.crt) and returns the key of its model.ProxyCA.
type CACheck func(namespace, name string) (key string, err error)

// CheckBackendTLSPolicies checks every policy and resolves conflicts on
// each target by the spec's rule: the oldest policy, then the first by
// "namespace/name", takes precedence; the others are Accepted=False,
// Conflicted. A Problem names each policy not honoured as written.
func CheckBackendTLSPolicies(policies []*gwv1.BackendTLSPolicy, ca CACheck) (*BackendTLS, []model.Problem) {
	bt := &BackendTLS{winners: map[policyTarget]*BackendTLSPolicy{}}
	var problems []model.Problem
	claims := map[policyTarget][]*BackendTLSPolicy{}
	for _, in := range policies {
		p, targets, ps := checkBackendTLSPolicy(in, ca)
		problems = append(problems, ps...)
		bt.Policies = append(bt.Policies, p)
		for _, t := range targets {
			claims[t] = append(claims[t], p)
		}
	}
	for t, list := range claims {
		slices.SortFunc(list, func(a, b *BackendTLSPolicy) int {
			return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.Ref.Key(), b.Ref.Key()))
		})
		bt.winners[t] = list[0]
		for _, loser := range list[1:] {
			if !slices.Contains(loser.lostTo, list[0]) {
				loser.lostTo = append(loser.lostTo, list[0])
			}
		}
	}
	for _, p := range bt.Policies {
		if len(p.lostTo) == 0 || p.Accepted.Status == metav1.ConditionFalse {
			continue
		}
		msg := fmt.Sprintf("a target is also %s's, which takes precedence (older, or first by name)", p.lostTo[0].Ref)
		p.Accepted = policyCondition(gwv1.PolicyConditionAccepted, false, string(gwv1.PolicyReasonConflicted), msg)
		problems = append(problems, policyProblem(p.Ref, p.Accepted, msg+"; it applies where it takes precedence"))
	}
	return bt, problems
}

// checkBackendTLSPolicy checks one policy: its targets, and what it asks
// of the connection.
func checkBackendTLSPolicy(in *gwv1.BackendTLSPolicy, ca CACheck) (*BackendTLSPolicy, []policyTarget, []model.Problem) {
	p := &BackendTLSPolicy{
		Ref:        model.ObjectRef{Kind: KindBackendTLSPolicy, Namespace: in.Namespace, Name: in.Name, UID: string(in.UID)},
		Generation: in.Generation, Created: in.CreationTimestamp.Time,
		Accepted:     policyCondition(gwv1.PolicyConditionAccepted, true, string(gwv1.PolicyReasonAccepted), "the policy applies to its targets"),
		ResolvedRefs: policyCondition(gwv1.BackendTLSPolicyConditionResolvedRefs, true, string(gwv1.BackendTLSPolicyReasonResolvedRefs), "every caCertificateRef is resolved"),
	}
	var problems []model.Problem
	refuse := func(reason, msg string) {
		if p.Accepted.Status == metav1.ConditionTrue {
			p.Accepted = policyCondition(gwv1.PolicyConditionAccepted, false, reason, msg)
		}
		problems = append(problems, policyProblem(p.Ref, policyCondition(gwv1.PolicyConditionAccepted, false, reason, msg),
			msg+"; the requests to its targets answer 503"))
	}
	var targets []policyTarget
	spec := &in.Spec
	if len(spec.TargetRefs) > maxPolicyTargets {
		refuse(string(gwv1.PolicyReasonInvalid), fmt.Sprintf("spec.targetRefs: %d targets, at most %d", len(spec.TargetRefs), maxPolicyTargets))
		return p, nil, problems
	}
	for i, t := range spec.TargetRefs {
		field := fmt.Sprintf("spec.targetRefs[%d]", i)
		if (t.Group != "" && t.Group != "core") || t.Kind != "Service" {
			problems = append(problems, model.Problem{Object: p.Ref, Reason: string(gwv1.PolicyReasonInvalid),
				Message: fmt.Sprintf("%s: kind %q of group %q: only core Services are targets; it is ignored",
					field, model.Truncate(string(t.Kind)), model.Truncate(string(t.Group)))})
			continue
		}
		if err := model.ValidateServiceName(string(t.Name)); err != nil {
			problems = append(problems, model.Problem{Object: p.Ref, Reason: string(gwv1.PolicyReasonInvalid),
				Message: fmt.Sprintf("%s: %v; it is ignored", field, err)})
			continue
		}
		section := ""
		if t.SectionName != nil {
			section = string(*t.SectionName)
			if err := checkSectionName(section); err != nil {
				problems = append(problems, model.Problem{Object: p.Ref, Reason: string(gwv1.PolicyReasonInvalid),
					Message: fmt.Sprintf("%s.sectionName %q: %v; it is ignored", field, model.Truncate(section), err)})
				continue
			}
		}
		pt := policyTarget{in.Namespace, string(t.Name), section}
		if !slices.Contains(targets, pt) {
			targets = append(targets, pt)
		}
	}
	if len(targets) == 0 {
		refuse(string(gwv1.PolicyReasonInvalid), "spec.targetRefs: no core Service is targeted")
		return p, nil, problems
	}
	tls, reason, msg := policyTLS(in, p, ca)
	if reason != "" {
		refuse(reason, msg)
		return p, targets, problems
	}
	p.TLS = tls
	return p, targets, problems
}

// policyTLS is the connection a policy asks for, or why it cannot be
// made: the reason of its Accepted condition and a message. A bad
// caCertificateRef also sets p's ResolvedRefs condition.
func policyTLS(in *gwv1.BackendTLSPolicy, p *BackendTLSPolicy, ca CACheck) (*model.UpstreamTLS, string, string) {
	v := &in.Spec.Validation
	invalid := string(gwv1.PolicyReasonInvalid)
	if len(in.Spec.Options) > 0 {
		return nil, invalid, "spec.options: no option is supported by Causeway"
	}
	host := string(v.Hostname)
	if err := CheckHostname(host); err != nil || strings.HasPrefix(host, "*.") {
		if err == nil {
			err = fmt.Errorf("a wildcard")
		}
		return nil, invalid, fmt.Sprintf("spec.validation.hostname %q: %v", model.Truncate(host), err)
	}
	// nginx checks the backend's certificate against one name, the one
	// it sends as SNI: subjectAltNames are honoured only when they are
	// that name alone.
	for i, san := range v.SubjectAltNames {
		if san.Type != gwv1.HostnameSubjectAltNameType || string(san.Hostname) != host {
			return nil, invalid, fmt.Sprintf("spec.validation.subjectAltNames[%d]: this data plane checks the backend's certificate "+
				"against spec.validation.hostname only, not other subject alternative names", i)
		}
	}
	t := &model.UpstreamTLS{Verify: true, Name: host, ServerName: true, VerifyDepth: maxVerifyDepth}
	refs := v.CACertificateRefs
	switch {
	case len(refs) > 0 && v.WellKnownCACertificates != nil:
		return nil, invalid, "spec.validation: both caCertificateRefs and wellKnownCACertificates"
	case v.WellKnownCACertificates != nil:
		if *v.WellKnownCACertificates != gwv1.WellKnownCACertificatesSystem {
			return nil, invalid, fmt.Sprintf("spec.validation.wellKnownCACertificates %q: only System is supported",
				model.Truncate(string(*v.WellKnownCACertificates)))
		}
		t.SystemCAs = true
		return t, "", ""
	case len(refs) == 0:
		return nil, invalid, "spec.validation: neither caCertificateRefs nor wellKnownCACertificates"
	case len(refs) > 1:
		return nil, invalid, fmt.Sprintf("spec.validation.caCertificateRefs: %d references; Causeway supports one", len(refs))
	}
	r := refs[0]
	field := "spec.validation.caCertificateRefs[0]"
	if (r.Group != "" && r.Group != "core") || r.Kind != "ConfigMap" {
		msg := fmt.Sprintf("%s: kind %q of group %q: only a core ConfigMap holds the CA bundle", field,
			model.Truncate(string(r.Kind)), model.Truncate(string(r.Group)))
		p.ResolvedRefs = policyCondition(gwv1.BackendTLSPolicyConditionResolvedRefs, false, string(gwv1.BackendTLSPolicyReasonInvalidKind), msg)
		return nil, string(gwv1.BackendTLSPolicyReasonNoValidCACertificate), msg
	}
	var key string
	err := model.ValidateObjectName("ConfigMap", string(r.Name))
	if err == nil {
		if ca == nil {
			err = fmt.Errorf("ConfigMap %s/%s is not known", in.Namespace, r.Name)
		} else {
			key, err = ca(in.Namespace, string(r.Name))
		}
	}
	if err != nil {
		msg := fmt.Sprintf("%s: %v", field, err)
		p.ResolvedRefs = policyCondition(gwv1.BackendTLSPolicyConditionResolvedRefs, false, string(gwv1.BackendTLSPolicyReasonInvalidCACertificateRef), msg)
		return nil, string(gwv1.BackendTLSPolicyReasonNoValidCACertificate), msg
	}
	t.CAConfigMap = key
	return t, "", ""
}

// maxVerifyDepth is how long a backend's chain may be: a CA and
// intermediates, as in the ConfigMap (nginx's default, 1, takes none).
const maxVerifyDepth = 4

func policyCondition(typ gwv1.PolicyConditionType, ok bool, reason, msg string) metav1.Condition {
	st := metav1.ConditionTrue
	if !ok {
		st = metav1.ConditionFalse
	}
	return metav1.Condition{Type: string(typ), Status: st, Reason: reason, Message: msg}
}

func policyProblem(ref model.ObjectRef, c metav1.Condition, msg string) model.Problem {
	return model.Problem{Object: ref, Reason: c.Reason, Message: msg,
		Condition: &model.StatusCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason}}
}

// Used records that Gateway g has a route whose target p applies to.
func (p *BackendTLSPolicy) Used(g model.ObjectRef) {
	if !slices.ContainsFunc(p.Ancestors, func(a model.ObjectRef) bool { return a.Key() == g.Key() }) {
		p.Ancestors = append(p.Ancestors, g)
	}
}

// Finish gives each policy that lost a target the ancestors of the
// policies it lost to (they are where it would have applied), and sorts
// every list.
func (bt *BackendTLS) Finish() {
	if bt == nil {
		return
	}
	for _, p := range bt.Policies {
		for _, w := range p.lostTo {
			for _, a := range w.Ancestors {
				p.Used(a)
			}
		}
	}
	for _, p := range bt.Policies {
		model.SortRefs(p.Ancestors)
	}
}
