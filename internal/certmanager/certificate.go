// Package certmanager provides the cert-manager Certificates that
// VirtualServers ask for with spec.tls.cert-manager, as NGINX Ingress
// Controller's cert-manager integration does: one Certificate per
// VirtualServer, named after and issuing its tls.secret for its host,
// controlled by the VirtualServer. cert-manager issues the Secret, which
// the controller then serves like any other. Package owned writes them,
// on the leader (Kind).
package certmanager

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/owned"
)

// CertificateGVR is cert-manager's Certificate resource.
var CertificateGVR = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}

// TempCertAnnotation asks cert-manager for a temporary self-signed
// certificate until the real one is issued (issue-temp-cert).
const TempCertAnnotation = "cert-manager.io/issue-temporary-certificate"

// keyUsages are the key usages and extended key usages cert-manager's
// Certificate accepts.
var keyUsages = map[string]bool{
	"signing": true, "digital signature": true, "content commitment": true, "key encipherment": true,
	"key agreement": true, "data encipherment": true, "cert sign": true, "crl sign": true,
	"encipher only": true, "decipher only": true, "any": true, "server auth": true, "client auth": true,
	"code signing": true, "email protection": true, "s/mime": true, "ipsec end system": true,
	"ipsec tunnel": true, "ipsec user": true, "timestamping": true, "ocsp signing": true,
	"microsoft sgc": true, "netscape sgc": true,
}

// defaultUsages are cert-manager's defaults, which NIC sets explicitly.
var defaultUsages = []string{"digital signature", "key encipherment"}

// Request is what a VirtualServer's spec.tls.cert-manager asks for, read
// and checked.
type Request struct {
	IssuerName, IssuerKind, IssuerGroup string
	CommonName                          string
	Duration, RenewBefore               time.Duration
	Usages                              []string
	TempCert                            bool
}

// Parse checks cm as NGINX Ingress Controller does: exactly one of issuer
// and cluster-issuer; issuer-kind and issuer-group only with issuer;
// durations in Go's syntax (h, m, s), above zero; usages from
// cert-manager's list, comma-separated. The names must be valid object
// names (the API server would refuse the Certificate otherwise).
func Parse(cm *nicv1.CertManager) (Request, error) {
	var r Request
	var errs []string
	switch {
	case cm.Issuer != "" && cm.ClusterIssuer != "":
		errs = append(errs, "issuer and cluster-issuer may not both be set")
	case cm.Issuer != "":
		r.IssuerName, r.IssuerKind = cm.Issuer, "Issuer"
	case cm.ClusterIssuer != "":
		r.IssuerName, r.IssuerKind = cm.ClusterIssuer, "ClusterIssuer"
		if cm.IssuerKind != "" || cm.IssuerGroup != "" {
			errs = append(errs, "issuer-kind and issuer-group may not be set with cluster-issuer")
		}
	default:
		errs = append(errs, "one of issuer and cluster-issuer is required")
	}
	if r.IssuerName != "" {
		if e := validation.IsDNS1123Subdomain(r.IssuerName); len(e) > 0 {
			errs = append(errs, fmt.Sprintf("issuer name %q: %s", model.Truncate(r.IssuerName), strings.Join(e, "; ")))
		}
	}
	if cm.IssuerKind != "" && cm.ClusterIssuer == "" {
		if e := validation.IsDNS1035Label(strings.ToLower(cm.IssuerKind)); len(e) > 0 {
			errs = append(errs, fmt.Sprintf("issuer-kind %q is not a kind", model.Truncate(cm.IssuerKind)))
		}
		r.IssuerKind = cm.IssuerKind
	}
	if cm.IssuerGroup != "" && cm.ClusterIssuer == "" {
		if e := validation.IsDNS1123Subdomain(cm.IssuerGroup); len(e) > 0 {
			errs = append(errs, fmt.Sprintf("issuer-group %q is not an API group", model.Truncate(cm.IssuerGroup)))
		}
		r.IssuerGroup = cm.IssuerGroup
	}
	if cm.CommonName != "" {
		if len(cm.CommonName) > 64 || strings.ContainsAny(cm.CommonName, "\x00\r\n") {
			errs = append(errs, fmt.Sprintf("common-name %q: want at most 64 characters on one line", model.Truncate(cm.CommonName)))
		}
		r.CommonName = cm.CommonName
	}
	duration := func(field, v string) time.Duration {
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = errors.New("want more than 0")
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s %q: %v", field, model.Truncate(v), err))
			return 0
		}
		return d
	}
	r.Duration = duration("duration", cm.Duration)
	r.RenewBefore = duration("renew-before", cm.RenewBefore)
	r.Usages = defaultUsages
	if cm.Usages != "" {
		r.Usages = nil
		for u := range strings.SplitSeq(cm.Usages, ",") {
			u = strings.TrimSpace(u)
			if !keyUsages[u] {
				errs = append(errs, fmt.Sprintf("usages: %q is not a cert-manager key usage", model.Truncate(u)))
				continue
			}
			r.Usages = append(r.Usages, u)
		}
	}
	r.TempCert = cm.IssueTempCert
	if len(errs) > 0 {
		return Request{}, errors.New(strings.Join(errs, "; "))
	}
	return r, nil
}

// Want returns the Certificate vs asks for, nil when it asks for none
// (no spec.tls.cert-manager or no tls.secret), or the error that makes
// its request unusable.
func Want(vs *nicv1.VirtualServer) (*unstructured.Unstructured, error) {
	tls := vs.Spec.TLS
	if tls == nil || tls.CertManager == nil || tls.Secret == "" {
		return nil, nil
	}
	r, err := Parse(tls.CertManager)
	if err != nil {
		return nil, err
	}
	spec := map[string]any{
		"dnsNames":   []any{vs.Spec.Host},
		"secretName": tls.Secret,
		"issuerRef":  issuerRef(r),
		"usages":     toAny(r.Usages),
	}
	if r.CommonName != "" {
		spec["commonName"] = r.CommonName
	}
	if r.Duration > 0 {
		spec["duration"] = r.Duration.String()
	}
	if r.RenewBefore > 0 {
		spec["renewBefore"] = r.RenewBefore.String()
	}
	crt := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cert-manager.io/v1",
		"kind":       "Certificate",
		"spec":       spec,
	}}
	crt.SetNamespace(vs.Namespace)
	crt.SetName(tls.Secret)
	crt.SetLabels(maps.Clone(vs.Labels))
	if r.TempCert {
		crt.SetAnnotations(map[string]string{TempCertAnnotation: "true"})
	}
	crt.SetOwnerReferences([]metav1.OwnerReference{owned.ControllerRef(vs)})
	return crt, nil
}

func issuerRef(r Request) map[string]any {
	ref := map[string]any{"name": r.IssuerName, "kind": r.IssuerKind}
	if r.IssuerGroup != "" {
		ref["group"] = r.IssuerGroup
	}
	return ref
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Differs reports whether have needs want's spec, labels or temporary
// certificate annotation. Other fields cert-manager or users set (its
// status, other annotations) are left alone.
func Differs(have, want *unstructured.Unstructured) bool {
	hs, _, _ := unstructured.NestedMap(have.Object, "spec")
	ws, _, _ := unstructured.NestedMap(want.Object, "spec")
	for k, v := range ws {
		if !owned.EqualJSON(hs[k], v) {
			return true
		}
	}
	for _, k := range []string{"commonName", "duration", "renewBefore"} {
		if _, ok := ws[k]; !ok && !owned.EqualJSON(hs[k], nil) {
			return true
		}
	}
	if !maps.Equal(have.GetLabels(), want.GetLabels()) && !(len(have.GetLabels()) == 0 && len(want.GetLabels()) == 0) {
		return true
	}
	return have.GetAnnotations()[TempCertAnnotation] != want.GetAnnotations()[TempCertAnnotation]
}

// Kind is the Certificate for package owned's Writer.
var Kind = owned.Kind{Name: "Certificate", Resource: CertificateGVR, Want: Want, Differs: Differs, Update: update}

// update sets want's spec, labels and temporary certificate annotation
// onto have, keeping the annotations others set.
func update(have, want *unstructured.Unstructured) {
	have.Object["spec"] = want.Object["spec"]
	have.SetLabels(want.GetLabels())
	a := have.GetAnnotations()
	if want.GetAnnotations()[TempCertAnnotation] != "" {
		if a == nil {
			a = map[string]string{}
		}
		a[TempCertAnnotation] = "true"
	} else {
		delete(a, TempCertAnnotation)
	}
	have.SetAnnotations(a)
}
