package equivalence

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/causeway/causeway/internal/build"
	"github.com/causeway/causeway/internal/class"
	"github.com/causeway/causeway/internal/frontend/gateway"
	"github.com/causeway/causeway/internal/gatewayservice"
	"github.com/causeway/causeway/internal/migrate/togateway"
	"github.com/causeway/causeway/internal/source"
)

// The world both models are built in: the objects the Ingresses and the
// routes name but the conversion does not read (Services, their endpoints,
// TLS Secrets) are assumed to exist and be valid, so that a difference
// comes from the conversion, never from a missing object. Every Service
// gets one ready endpoint on each port it is named with; every TLS Secret
// the same throw-away certificate.

// ingressClass is the class the Ingresses are built under: the converter
// has already chosen which Ingresses to convert.
const ingressClass = "causeway-equivalence"

// buildOptions are the options of both builds: a controller with the
// modules Debian's nginx has (Lua, headers-more, stream) and TLS
// passthrough on (ingress-nginx's --enable-ssl-passthrough, which the
// annotation needs), reading the controller's ConfigMap the conversion
// read.
func buildOptions(in togateway.Input, prefix string) build.Options {
	o := build.Options{
		Class:                 class.Options{ControllerName: "causeway.io/ingress-controller", IngressClass: ingressClass},
		AnnotationsPrefix:     prefix,
		HeadersMoreAvailable:  true,
		LuaAvailable:          true,
		TLSPassthrough:        true,
		StreamAvailable:       true,
		StreamRealIPAvailable: true,
	}
	if in.Controller != nil {
		o.ConfigMap = in.Controller.Namespace + "/" + in.Controller.Name
	}
	return o
}

// snapshots are the Ingress side's and the Gateway side's: world's
// Services, EndpointSlices, Secrets and Gateway Services, or (world nil)
// the assumed ones, among which the Services the leader would make for
// the Gateways (each Gateway its own ports, as in a cluster: two Gateways
// may both listen on 443).
func snapshots(in togateway.Input, opts togateway.Options, out togateway.Output, converted []*networkingv1.Ingress, world *source.Snapshot) (ing, gw *source.Snapshot) {
	common := source.Snapshot{ConfigMaps: in.ConfigMaps}
	var gatewayServices []*corev1.Service
	if world != nil {
		common.Services, common.EndpointSlices, common.Secrets = world.Services, world.EndpointSlices, world.Secrets
		gatewayServices = world.GatewayServices
	} else {
		assumeServices(&common, converted, opts.AnnotationsPrefix)
		assumeSecrets(&common, converted)
		plan := gatewayservice.Desired(out.Gateways, gatewayservice.ListenerSets{}, nil, gatewayservice.Options{Namespace: "causeway", Ports: gatewayservice.PortRange{First: 20000, Last: 29999}})
		for _, name := range sortedKeys(plan.Want) {
			gatewayServices = append(gatewayServices, plan.Want[name])
		}
	}

	ing = new(source.Snapshot)
	*ing = common
	for _, i := range converted {
		c := i.DeepCopy()
		c.Spec.IngressClassName = ptr.To(ingressClass)
		ing.Ingresses = append(ing.Ingresses, c)
	}

	gw = new(source.Snapshot)
	*gw = common
	gw.GatewayClasses = []*gwv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: opts.GatewayClass},
		Spec: gwv1.GatewayClassSpec{ControllerName: gateway.ControllerName}}}
	gw.Gateways, gw.HTTPRoutes, gw.GRPCRoutes = out.Gateways, out.HTTPRoutes, out.GRPCRoutes
	gw.TLSRoutes, gw.ReferenceGrants = out.TLSRoutes, out.ReferenceGrants
	gw.GatewayServices = gatewayServices
	return ing, gw
}

// backendsOf calls f with every Service backend the Ingress names: its
// paths', its default backend's and its default-backend annotation's
// (on port 80).
func backendsOf(i *networkingv1.Ingress, prefix string, f func(*networkingv1.IngressServiceBackend)) {
	if name := i.Annotations[prefix+"/default-backend"]; name != "" {
		f(&networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}})
	}
	if b := i.Spec.DefaultBackend; b != nil && b.Service != nil {
		f(b.Service)
	}
	for _, r := range i.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil {
				f(p.Backend.Service)
			}
		}
	}
}

// assumeServices adds a Service, with one ready endpoint, for every
// Service the Ingresses name, with every port they name it by.
func assumeServices(s *source.Snapshot, ings []*networkingv1.Ingress, prefix string) {
	type svcKey struct{ ns, name string }
	ports := map[svcKey][]networkingv1.ServiceBackendPort{}
	var order []svcKey
	for _, i := range ings {
		backendsOf(i, prefix, func(b *networkingv1.IngressServiceBackend) {
			k := svcKey{i.Namespace, b.Name}
			if _, ok := ports[k]; !ok {
				order = append(order, k)
			}
			if !slices.Contains(ports[k], b.Port) {
				ports[k] = append(ports[k], b.Port)
			}
		})
	}
	for n, k := range order {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: k.name},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10"}}
		eps := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: k.ns, Name: k.name + "-assumed", Labels: map[string]string{discoveryv1.LabelServiceName: k.name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1." + strconv.Itoa(n/250) + "." + strconv.Itoa(n%250+1)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		}
		named := int32(10000)
		for _, p := range ports[k] {
			sp := corev1.ServicePort{Name: p.Name, Port: p.Number, Protocol: corev1.ProtocolTCP}
			if p.Name != "" {
				sp.Port, named = named, named+1
			} else {
				sp.Name = "port-" + strconv.Itoa(int(p.Number))
			}
			svc.Spec.Ports = append(svc.Spec.Ports, sp)
			eps.Ports = append(eps.Ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(int32(8080)), Protocol: ptr.To(corev1.ProtocolTCP)})
		}
		s.Services = append(s.Services, svc)
		s.EndpointSlices = append(s.EndpointSlices, eps)
	}
}

// assumeSecrets adds a TLS Secret for every spec.tls secretName.
func assumeSecrets(s *source.Snapshot, ings []*networkingv1.Ingress) {
	seen := map[string]bool{}
	var crt, key []byte
	for _, i := range ings {
		for _, t := range i.Spec.TLS {
			if t.SecretName == "" || seen[i.Namespace+"/"+t.SecretName] {
				continue
			}
			seen[i.Namespace+"/"+t.SecretName] = true
			if crt == nil {
				crt, key = throwAwayCertificate()
			}
			s.Secrets = append(s.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: i.Namespace, Name: t.SecretName},
				Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}})
		}
	}
}

// throwAwayCertificate is a self-signed certificate that only has to
// load: nothing is served with it.
func throwAwayCertificate() (crt, key []byte) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "causeway migrate to-gateway"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		panic(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
