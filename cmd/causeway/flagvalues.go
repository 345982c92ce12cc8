package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// flagRef is a flag naming a namespaced object of kind.
type flagRef struct{ flag, kind, value string }

// objectRefs are the flags that name an object as NAMESPACE/NAME.
func (f *controllerFlags) objectRefs() []flagRef {
	return []flagRef{
		{"--configmap", "ConfigMap", f.configMap},
		{"--default-ssl-certificate", "Secret", f.defaultSSLCert},
		{"--global-configuration", "GlobalConfiguration", f.globalConfig},
		{"--tcp-services-configmap", "ConfigMap", f.tcpServices},
		{"--udp-services-configmap", "ConfigMap", f.udpServices},
	}
}

// checkObjectRef checks the NAMESPACE/NAME of a namespaced object of
// kind, which its messages name.
func checkObjectRef(kind, v string) error {
	ns, name, ok := strings.Cut(v, "/")
	if !ok {
		return fmt.Errorf("%q is not NAMESPACE/NAME of a %s", v, kind)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("%s name %q: %s", kind, name, strings.Join(errs, "; "))
	}
	return nil
}

// checkServiceRef checks NAMESPACE/NAME[:PORT].
func checkServiceRef(v string) error {
	ns, rest, ok := strings.Cut(v, "/")
	if !ok {
		return fmt.Errorf("%q is not NAMESPACE/NAME[:PORT]", v)
	}
	name, port, hasPort := strings.Cut(rest, ":")
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return fmt.Errorf("service %q: %s", name, strings.Join(errs, "; "))
	}
	if hasPort {
		if n, err := strconv.Atoi(port); err == nil {
			if n < 1 || n > 65535 {
				return fmt.Errorf("port %d is out of range", n)
			}
		} else if errs := validation.IsValidPortName(port); len(errs) > 0 {
			return fmt.Errorf("port %q: %s", port, strings.Join(errs, "; "))
		}
	}
	return nil
}

// gracePeriod is --shutdown-grace-period: whole seconds, as
// ingress-nginx's flag of the same name takes, or a Go duration.
type gracePeriod time.Duration

func (g *gracePeriod) String() string { return time.Duration(*g).String() }
func (g *gracePeriod) Type() string   { return "duration" }
func (g *gracePeriod) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return fmt.Errorf("%q is neither seconds nor a duration", v)
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return fmt.Errorf("%q is negative", v)
	}
	*g = gracePeriod(d)
	return nil
}
