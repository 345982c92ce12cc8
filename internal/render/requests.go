package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// This file prints the http-level settings of the compression and
// request handling keys of the ConfigMap into the main view.

// Worker connection bounds: the default when neither the ConfigMap nor an
// open files limit says more, and the bounds of a derived value.
const (
	defaultWorkerConnections = 16384
	minWorkerConnections     = 64
	maxWorkerConnections     = 1 << 20
)

// planRequests fills the compression and request handling fields of v.
func (v *mainView) planRequests(p Params) error {
	c := &v.Config
	var err error
	if c.Gzip.Enabled {
		if v.GzipTypes, err = mimeTypes(c.Gzip.Types); err != nil {
			return fmt.Errorf("gzip-types: %w", err)
		}
		v.GzipOn = true
	}
	// The build turns brotli off when the module is missing; without a
	// path it stays off here too, so nginx never sees brotli directives it
	// cannot read.
	if c.Brotli.Enabled && p.BrotliModule != "" {
		q, err := Quote(p.BrotliModule)
		if err != nil {
			return fmt.Errorf("brotli module path: %w", err)
		}
		if v.BrotliTypes, err = mimeTypes(c.Brotli.Types); err != nil {
			return fmt.Errorf("brotli-types: %w", err)
		}
		v.LoadModules = append(v.LoadModules, q)
		v.BrotliOn = true
	}
	// Without headers-more, server-tokens false still hides the version
	// (Server: nginx); the controller says so at start.
	// Snippets' more_* directives need it too (the build drops them
	// when it is missing).
	if v.moreSnippets && p.HeadersMoreModule == "" {
		return fmt.Errorf("a snippet uses more_set_headers or more_clear_headers, and the headers-more module is not available")
	}
	if (!c.ServerTokens || v.moreSnippets) && p.HeadersMoreModule != "" {
		q, err := Quote(p.HeadersMoreModule)
		if err != nil {
			return fmt.Errorf("headers-more module path: %w", err)
		}
		v.LoadModules = append(v.LoadModules, q)
		v.ClearServerHeader = !c.ServerTokens
	}
	switch c.HTTPRedirectCode {
	case 301, 302, 307, 308:
	default:
		return fmt.Errorf("http-redirect-code %d", c.HTTPRedirectCode)
	}
	if !c.ErrorLogLevel.Valid() {
		return fmt.Errorf("error-log-level %q", c.ErrorLogLevel)
	}

	v.WorkerRlimitNofile = c.MaxWorkerOpenFiles
	if v.WorkerRlimitNofile == 0 && p.OpenFilesLimit > 0 {
		// ingress-nginx's automatic value: leave 1024 for the rest.
		v.WorkerRlimitNofile = int(max(min(p.OpenFilesLimit, 1<<24+1024), 2048) - 1024)
	}
	v.WorkerConnections = c.WorkerConnections
	if v.WorkerConnections == 0 {
		// max-worker-connections 0: three quarters of the open files.
		v.WorkerConnections = defaultWorkerConnections
		if v.WorkerRlimitNofile > 0 {
			v.WorkerConnections = min(max(v.WorkerRlimitNofile*3/4, minWorkerConnections), maxWorkerConnections)
		}
	}

	b := c.LargeClientHeaderBuffers
	if b.Count < 1 || b.Size < 1 {
		return fmt.Errorf("large-client-header-buffers %d %d", b.Count, b.Size)
	}
	v.LargeClientHeaderBuffers = strconv.Itoa(b.Count) + " " + model.FormatSize(b.Size)
	v.KeepAlive = model.FormatDuration(c.KeepAlive)
	v.ClientHeaderBufferSize = model.FormatSize(c.ClientHeaderBufferSize)
	// nginx reads a PROXY protocol header and the request headers under
	// one timer, client_header_timeout: with the PROXY protocol on, the
	// shorter of the two timeouts bounds both.
	timeout := c.ClientHeaderTimeout
	if c.RealIP.UseProxyProtocol && c.RealIP.ProxyProtocolHeaderTimeout < timeout {
		timeout = c.RealIP.ProxyProtocolHeaderTimeout
	}
	v.ClientHeaderTimeout = model.FormatDuration(timeout)
	v.ClientBodyTimeout = model.FormatDuration(c.ClientBodyTimeout)
	return nil
}

// mimeTypes prints a gzip_types or brotli_types list, re-checked. text/html
// is left out: nginx always compresses it and warns when it is listed. ""
// means the directive is left out (text/html only).
func mimeTypes(types []string) (string, error) {
	checked, err := model.ParseMIMETypes(strings.Join(types, " "))
	if err != nil {
		return "", err
	}
	var out []string
	for _, t := range checked {
		if t != "text/html" {
			out = append(out, t)
		}
	}
	return strings.Join(out, " "), nil
}
