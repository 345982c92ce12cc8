// Package externaldns provides the DNSEndpoints (externaldns.nginx.org/v1)
// that VirtualServers ask for with spec.externalDNS, as NGINX Ingress
// Controller's external-dns integration does: one per VirtualServer, named
// after it, with records of its host pointing at the addresses the
// controller publishes (the published Service's load balancer, or
// --publish-address), controlled by the VirtualServer. external-dns reads
// them as its CRD source. Package owned writes them, on the leader.
package externaldns

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	extdnsv1 "github.com/causeway/causeway/internal/apis/externaldns/v1"
	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/owned"
)

// recordTypes are the record types a VirtualServer may name; NIC derives
// A, AAAA and CNAME from the addresses and passes any other name on.
var recordTypes = map[string]bool{"A": true, "AAAA": true, "CNAME": true, "TXT": true, "SRV": true, "NS": true, "PTR": true, "MX": true, "NAPTR": true}

// Limits of the fields, which external-dns hands to DNS providers.
const (
	maxTTL        = 1<<31 - 1
	maxProperties = 32
	maxValueLen   = 1024
)

// Check reports what makes ed unusable; the VirtualServer is served
// regardless, without a DNSEndpoint.
func Check(ed *nicv1.ExternalDNS) error {
	var errs []string
	if ed.RecordType != "" && !recordTypes[ed.RecordType] {
		errs = append(errs, fmt.Sprintf("recordType %q: want one of A, AAAA, CNAME, TXT, SRV, NS, PTR, MX, NAPTR", model.Truncate(ed.RecordType)))
	}
	if ed.RecordTTL < 0 || ed.RecordTTL > maxTTL {
		errs = append(errs, fmt.Sprintf("recordTTL %d: want 0 to %d seconds", ed.RecordTTL, maxTTL))
	}
	for _, k := range slices.Sorted(maps.Keys(ed.Labels)) {
		if e := validation.IsQualifiedName(k); len(e) > 0 {
			errs = append(errs, fmt.Sprintf("labels: key %q: %s", model.Truncate(k), strings.Join(e, "; ")))
		}
		if len(ed.Labels[k]) > maxValueLen {
			errs = append(errs, fmt.Sprintf("labels: %s: a value longer than %d", k, maxValueLen))
		}
	}
	if len(ed.ProviderSpecific) > maxProperties {
		errs = append(errs, fmt.Sprintf("providerSpecific: %d properties, want at most %d", len(ed.ProviderSpecific), maxProperties))
	}
	for i, p := range ed.ProviderSpecific {
		if p.Name == "" || len(p.Name) > 253 || len(p.Value) > maxValueLen {
			errs = append(errs, fmt.Sprintf("providerSpecific[%d]: want a name of 1 to 253 characters and a value of at most %d", i, maxValueLen))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// errNoAddress says the published addresses are not known yet; the
// DNSEndpoint is written once they are.
var errNoAddress = errors.New("no published address is known yet")

// Want returns the DNSEndpoint vs asks for with the published addresses
// addrs: nil when it asks for none, errNoAddress while addrs is empty, or
// what makes its request unusable. Addresses become A or AAAA records,
// host names a CNAME; a recordType set replaces the derived type, as in
// NIC. A wildcard host is a record of that wildcard name.
func Want(vs *nicv1.VirtualServer, addrs []networkingv1.IngressLoadBalancerIngress) (*unstructured.Unstructured, error) {
	ed := vs.Spec.ExternalDNS
	if !ed.Enable {
		return nil, nil
	}
	if err := Check(&ed); err != nil {
		return nil, err
	}
	byType := map[string][]string{}
	for _, a := range addrs {
		switch ip, err := netip.ParseAddr(a.IP); {
		case a.IP != "" && err == nil && ip.Is4():
			byType["A"] = append(byType["A"], ip.String())
		case a.IP != "" && err == nil:
			byType["AAAA"] = append(byType["AAAA"], ip.String())
		case a.Hostname != "":
			byType["CNAME"] = append(byType["CNAME"], a.Hostname)
		}
	}
	if len(byType) == 0 {
		return nil, errNoAddress
	}
	var labels extdnsv1.Labels
	if ed.Labels != nil {
		labels = maps.Clone(ed.Labels)
	}
	var props extdnsv1.ProviderSpecific
	for _, p := range ed.ProviderSpecific {
		props = append(props, extdnsv1.ProviderSpecificProperty{Name: p.Name, Value: p.Value})
	}
	dep := &extdnsv1.DNSEndpoint{
		TypeMeta:   metav1.TypeMeta{APIVersion: extdnsv1.SchemeGroupVersion.String(), Kind: "DNSEndpoint"},
		ObjectMeta: metav1.ObjectMeta{Namespace: vs.Namespace, Name: vs.Name, Labels: maps.Clone(vs.Labels), OwnerReferences: []metav1.OwnerReference{owned.ControllerRef(vs)}},
	}
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		targets := byType[typ]
		slices.Sort(targets)
		recordType := typ
		if ed.RecordType != "" {
			recordType = ed.RecordType
		}
		dep.Spec.Endpoints = append(dep.Spec.Endpoints, &extdnsv1.Endpoint{DNSName: vs.Spec.Host, Targets: slices.Compact(targets),
			RecordType: recordType, RecordTTL: extdnsv1.TTL(ed.RecordTTL), Labels: labels, ProviderSpecific: props})
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// Kind is the DNSEndpoint for package owned's Writer, with the addresses
// published (status.address.Source): none is written before they are
// known, and every one is rewritten when they change.
func Kind(addresses func() ([]networkingv1.IngressLoadBalancerIngress, bool)) owned.Kind {
	return owned.Kind{Name: "DNSEndpoint", Resource: extdnsv1.DNSEndpoints,
		Want: func(vs *nicv1.VirtualServer) (*unstructured.Unstructured, error) {
			addrs, ok := addresses()
			if !ok {
				return nil, nil
			}
			obj, err := Want(vs, addrs)
			if errors.Is(err, errNoAddress) {
				return nil, nil
			}
			return obj, err
		},
		Differs: Differs, Update: update}
}

// Differs reports whether have needs want's spec or labels.
func Differs(have, want *unstructured.Unstructured) bool {
	hs, _, _ := unstructured.NestedFieldNoCopy(have.Object, "spec")
	ws, _, _ := unstructured.NestedFieldNoCopy(want.Object, "spec")
	hl, wl := have.GetLabels(), want.GetLabels()
	return !owned.EqualJSON(hs, ws) || !(maps.Equal(hl, wl) || len(hl) == 0 && len(wl) == 0)
}

func update(have, want *unstructured.Unstructured) {
	have.Object["spec"] = want.Object["spec"]
	have.SetLabels(want.GetLabels())
}
