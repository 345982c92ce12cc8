package build

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	nicv1 "github.com/causeway/causeway/internal/apis/k8snginx/v1"
	"github.com/causeway/causeway/internal/frontend/nic"
	"github.com/causeway/causeway/internal/model"
)

// This file serves VirtualServers on the HTTP listeners of the
// GlobalConfiguration (spec.listener), as NGINX Ingress Controller does:
// a VirtualServer naming listeners is served on those ports only, over
// plain HTTP on listener.http (a listener without ssl) and over HTTPS on
// listener.https (one with ssl: true). Several VirtualServers may share a
// listener; hosts that none of them serves get 404 there.

// httpListener checks an HTTP listener's addresses (listenerAddresses).
func httpListener(l nicv1.Listener) (*model.HTTPListener, error) {
	out := &model.HTTPListener{Name: l.Name, Port: l.Port, SSL: l.Ssl}
	var err error
	if out.IPv4, out.IPv6, err = listenerAddresses(l); err != nil {
		return nil, err
	}
	return out, nil
}

// listenerAddresses checks a listener's addresses strictly, whatever its
// protocol: an IPv4 address for ipv4, an IPv6 one (no zone, no
// IPv4-mapped form) for ipv6, never a multicast one.
func listenerAddresses(l nicv1.Listener) (v4, v6 netip.Addr, err error) {
	if v4, err = listenerAddress("ipv4", l.IPv4, netip.Addr.Is4); err != nil {
		return v4, v6, err
	}
	v6, err = listenerAddress("ipv6", l.IPv6, func(a netip.Addr) bool { return a.Is6() && !a.Is4In6() && a.Zone() == "" })
	return v4, v6, err
}

func listenerAddress(field, s string, ok func(netip.Addr) bool) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(s)
	if err == nil && (!ok(a) || a.IsMulticast()) {
		err = errors.New("not a unicast address of that family")
	}
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s %q: %v", field, model.Truncate(s), err)
	}
	return a, nil
}

// vsListeners gives a VirtualServer with spec.listener the listeners it
// names instead of the controller's ports. A name the GlobalConfiguration
// lacks, or of the wrong kind, is a Problem, and the VirtualServer is not
// served over that protocol: never on a port it did not ask for.
func (b *virtualServerProcessor) vsListeners(srv *model.Server, t *nic.VirtualServer) {
	l := t.Listener
	if l == nil {
		return
	}
	out := &model.ServerListeners{}
	for _, f := range []struct {
		field, name, over string
		ssl               bool
		dst               **model.HTTPListener
	}{{"http", l.HTTP, "plain HTTP", false, &out.HTTP}, {"https", l.HTTPS, "HTTPS", true, &out.HTTPS}} {
		if f.name == "" {
			continue
		}
		hl, ok := b.gc.http[f.name]
		var why string
		switch {
		case b.gc.why != "":
			why = b.gc.why
		case !ok && b.gc.stream[f.name].name != "":
			why = fmt.Sprintf("listener %q of GlobalConfiguration %s is %s, not HTTP", f.name, b.opts.GlobalConfiguration, b.gc.stream[f.name].proto)
		case !ok:
			why = fmt.Sprintf("GlobalConfiguration %s has no usable HTTP listener %q", b.opts.GlobalConfiguration, f.name)
		case hl.SSL && !f.ssl:
			why = fmt.Sprintf("listener %q has ssl: true; name it in spec.listener.https", f.name)
		case !hl.SSL && f.ssl:
			why = fmt.Sprintf("listener %q has no ssl: true; name it in spec.listener.http", f.name)
		}
		if why != "" {
			b.problem(t.Ref, model.ReasonInvalid, false, "spec.listener.%s %q: %s; the VirtualServer is not served over %s", f.field, f.name, why, f.over)
			continue
		}
		*f.dst = hl
		if b.httpUsed == nil {
			b.httpUsed = map[string]*model.HTTPListener{}
		}
		b.httpUsed[f.name] = hl
	}
	srv.Listeners = out
}

// usedHTTPListeners are the HTTP listeners some server is served on,
// sorted by name.
func (b *virtualServerProcessor) usedHTTPListeners() []*model.HTTPListener {
	var out []*model.HTTPListener
	for _, n := range slices.Sorted(maps.Keys(b.httpUsed)) {
		out = append(out, b.httpUsed[n])
	}
	return out
}
