package render

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/causeway/causeway/internal/model"
)

// Custom error pages (ingress-nginx's custom-http-errors): the location
// intercepts the upstream's error statuses and hands each to a named
// location that asks the error backend for the page. The error backend
// learns the status from X-Code, and nginx has no variable holding the
// intercepted status there ($status is not set yet), so there is one
// named location per status, as in ingress-nginx.

type errorPageView struct {
	Code int
	Name string
}

// errorLocationView is one named location answering one status.
type errorLocationView struct {
	Name string
	Code int
	// Namespace, Ingress, Service and Port are quoted: the object the
	// location came from and the backend it proxied to.
	Namespace, Ingress, Service, Port string
	// Target selects the error backend and proxies to it (Pass, PassURL,
	// SelectKey, hooks), or answers 503 (Return) when it has no endpoint
	// in plain mode.
	Target locationView
	// Headers are the request headers besides the error's own.
	Headers headersView
}

// planErrors sends l's error statuses to the error backend. Named
// locations are shared by the locations of this server that have the same
// source, backend and error backend.
func (sp *serverPlan) planErrors(v *policyView, lv *locationView, l *model.Location) error {
	e := l.Policy.Errors
	var service, port string
	if b := sp.rc.backends[l.Backend()]; b != nil {
		service, port = b.Service, b.Port
	}
	var quoted [4]string
	for i, s := range []string{l.Source.Namespace, l.Source.Name, service, port} {
		q, err := Quote(s)
		if err != nil {
			return err
		}
		quoted[i] = q
	}
	var target locationView
	if err := selectBackend(&target, e.Backend, sp.rc.backends, sp.rc.lua); err != nil {
		return fmt.Errorf("error backend: %w", err)
	}
	// The error page's request is the location's, still naming its series.
	if sp.rc.p.Metrics != nil {
		target.AccessLogs = sp.rc.metricsAccessLogs(false)
	}
	if sp.rc.tracing {
		sp.rc.withSpanLog(&target)
	}
	key := fmt.Sprintf("%q %q", quoted, e.Backend)
	group, ok := sp.errs[key]
	if !ok {
		group = len(sp.errs)
		sp.errs[key] = group
	}
	codes := slices.Clone(e.Codes)
	slices.Sort(codes)
	for _, code := range slices.Compact(codes) {
		if code < 300 || code > 599 {
			return fmt.Errorf("error page status %d is outside 300-599", code)
		}
		name := "@causeway_err_" + strconv.Itoa(group) + "_" + strconv.Itoa(code)
		v.ErrorPages = append(v.ErrorPages, errorPageView{Code: code, Name: name})
		if sp.named[name] {
			continue
		}
		sp.named[name] = true
		sp.v.ErrorLocations = append(sp.v.ErrorLocations, errorLocationView{
			Name: name, Code: code,
			Namespace: quoted[0], Ingress: quoted[1], Service: quoted[2], Port: quoted[3],
			Target: target, Headers: *sp.clientHeaders(&headersView{Module: "proxy", Custom: sp.rc.setHeaders}),
		})
	}
	return nil
}
