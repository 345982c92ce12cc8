package model

// Defaults are the controller ConfigMap's values of ingress-nginx's
// per-location settings (proxy-buffering, custom-http-errors,
// force-ssl-redirect, ...): each applies wherever the annotation of the
// same name is not set, and that annotation overrides it alone, as in
// ingress-nginx. The ConfigMap front-end reads them with the annotations'
// own parsers; the Ingress front-end starts every Ingress from them, and
// the VirtualServer front-end every upstream from UpstreamProxy.
type Defaults struct {
	// Proxy is the policy every Ingress location starts from. Only its
	// Buffering (BodySize aside: proxy-body-size is printed at the http
	// level), Retry.On, Retry.Timeout, HTTPVersion, CookieDomain,
	// CookiePath and RedirectRewrite are set, and only where they differ
	// from what the http level (or nginx) already applies, so that a
	// ConfigMap spelling out the defaults renders nothing more.
	Proxy Policy
	// RedirectFrom and RedirectTo are proxy-redirect-from ("off", or a
	// URL or path) and proxy-redirect-to ("off", or a URL or path) as
	// their grammars read them, "" when not set: an Ingress's
	// annotations replace each on its own, so the Ingress front-end needs
	// both. Proxy.RedirectRewrite is what the two make together.
	RedirectFrom, RedirectTo string
	// ErrorCodes are custom-http-errors: the upstream statuses every
	// Ingress location, and the default backend's, hands to its default
	// backend. Sorted, without duplicates.
	ErrorCodes []int
	// ForceSSLRedirect and PreserveTrailingSlash are the host-level
	// redirect settings of every Ingress host.
	ForceSSLRedirect, PreserveTrailingSlash bool
	// ServiceUpstream proxies every Ingress path to its Service's cluster
	// IP instead of its endpoints.
	ServiceUpstream bool
	// Keys are the ConfigMap keys read into these, in the order read.
	Keys []string
	// SnippetVariables are the variables the ConfigMap's http-snippet
	// defines with map, which the snippets of Ingresses (and the
	// ConfigMap's others) may read.
	SnippetVariables []string
}

// UpstreamProxy is the part of Proxy that a VirtualServer upstream starts
// from: the buffering and retry settings that an upstream has fields of
// its own for (buffering, buffer-size, buffers, busy-buffers-size,
// client-body-buffer-size, next-upstream, next-upstream-timeout), and
// proxy_max_temp_file_size, which NGINX Ingress Controller's ConfigMap
// applies to VirtualServers too. The rest are ingress-nginx's own
// notions that a VirtualServer cannot override, and do not apply to it.
func (d *Defaults) UpstreamProxy() Policy {
	if d == nil {
		return Policy{}
	}
	b := d.Proxy.Buffering
	b.Request = nil
	return Policy{Buffering: b, Retry: Retry{On: d.Proxy.Retry.On, Timeout: d.Proxy.Retry.Timeout}}
}

// DropUnfit removes from b the busy buffers size and the largest
// temporary file that nginx would refuse beside b's own buffers, and
// describes each it removed by the ConfigMap key that sets it and its
// value ("proxy-busy-buffers-size 8k"). Each is checked where it is set,
// against the buffers known then; one inherited from Defaults.Proxy may no
// longer fit buffers that an annotation or a VirtualServer upstream then
// set. nginx's defaults, which always fit, apply instead.
func (b *Buffering) DropUnfit() []string {
	size := DefaultProxyBufferSize
	if b.BufferSize != nil {
		size = *b.BufferSize
	}
	var out []string
	if b.BusyBuffers != nil && BusyBuffersFit(*b.BusyBuffers, b.Buffers, size) != nil {
		out = append(out, "proxy-busy-buffers-size "+FormatSize(int64(*b.BusyBuffers)))
		b.BusyBuffers = nil
	}
	if t := b.MaxTempFile; t != nil && *t != 0 && *t < size {
		out = append(out, "proxy-max-temp-file-size "+FormatSize(int64(*t)))
		b.MaxTempFile = nil
	}
	return out
}
