package configmap

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/testcorpus"
)

// TestCompressionAndRequestKeys is one row per rule of each key: a good
// value sets the field, a bad one keeps the default with a Problem.
func TestCompressionAndRequestKeys(t *testing.T) {
	type row struct {
		key, value string
		ok         bool
		get        func(model.Config) any
		want       any
	}
	gzip := func(c model.Config) any { return c.Gzip }
	brotli := func(c model.Config) any { return c.Brotli }
	def := model.DefaultConfig()
	withGzip := func(f func(*model.Compression)) model.Compression { g := def.Gzip; f(&g); return g }
	withBrotli := func(f func(*model.Compression)) model.Compression { b := def.Brotli; f(&b); return b }
	rows := []row{
		// Compression.
		{"use-gzip", "true", true, gzip, withGzip(func(g *model.Compression) { g.Enabled = true })},
		{"use-gzip", "TRUE", true, gzip, withGzip(func(g *model.Compression) { g.Enabled = true })},
		{"use-gzip", "yes", false, gzip, def.Gzip},
		{"gzip-level", "9", true, gzip, withGzip(func(g *model.Compression) { g.Level = 9 })},
		{"gzip-level", "1", true, gzip, def.Gzip},
		{"gzip-level", "0", false, gzip, def.Gzip},
		{"gzip-level", "10", false, gzip, def.Gzip},
		{"gzip-min-length", "0", true, gzip, withGzip(func(g *model.Compression) { g.MinLength = 0 })},
		{"gzip-min-length", "1000", true, gzip, withGzip(func(g *model.Compression) { g.MinLength = 1000 })},
		{"gzip-min-length", "2k", true, gzip, withGzip(func(g *model.Compression) { g.MinLength = 2048 })},
		{"gzip-min-length", "-1", false, gzip, def.Gzip},
		{"gzip-min-length", "2g", false, gzip, def.Gzip},
		{"gzip-types", "application/json", true, gzip, withGzip(func(g *model.Compression) { g.Types = []string{"application/json"} })},
		{"gzip-types", "Text/CSS, application/json  text/css\ttext/plain", true, gzip,
			withGzip(func(g *model.Compression) { g.Types = []string{"text/css", "application/json", "text/plain"} })},
		{"gzip-types", "*", true, gzip, withGzip(func(g *model.Compression) { g.Types = []string{"*"} })},
		{"gzip-types", "application/vnd.api+json", true, gzip, withGzip(func(g *model.Compression) { g.Types = []string{"application/vnd.api+json"} })},
		{"gzip-types", "* text/css", false, gzip, def.Gzip},
		{"gzip-types", "text/*", false, gzip, def.Gzip},
		{"gzip-types", "text", false, gzip, def.Gzip},
		{"gzip-types", "text/html; charset=utf-8", false, gzip, def.Gzip},
		{"gzip-types", "", false, gzip, def.Gzip},
		{"gzip-types", "text/css;gzip off", false, gzip, def.Gzip},
		{"gzip-types", "text/$host", false, gzip, def.Gzip},
		{"gzip-types", "text/a#b", false, gzip, def.Gzip},
		{"gzip-types", ".text/css", false, gzip, def.Gzip},
		{"gzip-types", "application/" + strings.Repeat("x", 34), true, gzip, withGzip(func(g *model.Compression) { g.Types = []string{"application/" + strings.Repeat("x", 34)} })},
		{"gzip-types", "application/" + strings.Repeat("x", 35), false, gzip, def.Gzip},
		{"gzip-types", strings.Repeat("text/css ", 101), false, gzip, def.Gzip},
		{"enable-brotli", "true", true, brotli, withBrotli(func(b *model.Compression) { b.Enabled = true })},
		{"brotli-level", "0", true, brotli, withBrotli(func(b *model.Compression) { b.Level = 0 })},
		{"brotli-level", "11", true, brotli, withBrotli(func(b *model.Compression) { b.Level = 11 })},
		{"brotli-level", "12", false, brotli, def.Brotli},
		{"brotli-min-length", "100", true, brotli, withBrotli(func(b *model.Compression) { b.MinLength = 100 })},
		{"brotli-min-length", "1.5k", false, brotli, def.Brotli},
		{"brotli-types", "text/plain image/svg+xml", true, brotli, withBrotli(func(b *model.Compression) { b.Types = []string{"text/plain", "image/svg+xml"} })},
		{"brotli-types", "text/plain}", false, brotli, def.Brotli},

		// Request handling.
		{"keep-alive", "30", true, func(c model.Config) any { return c.KeepAlive }, 30 * time.Second},
		{"keep-alive", "0", true, func(c model.Config) any { return c.KeepAlive }, time.Duration(0)},
		{"keep-alive", "2m", true, func(c model.Config) any { return c.KeepAlive }, 2 * time.Minute},
		{"keep-alive", "25h", false, func(c model.Config) any { return c.KeepAlive }, 75 * time.Second},
		{"keep-alive", "30 s", false, func(c model.Config) any { return c.KeepAlive }, 75 * time.Second},
		{"keep-alive-requests", "100", true, func(c model.Config) any { return c.KeepAliveRequests }, 100},
		{"keep-alive-requests", "0", false, func(c model.Config) any { return c.KeepAliveRequests }, 1000},
		{"client-header-buffer-size", "4k", true, func(c model.Config) any { return c.ClientHeaderBufferSize }, int64(4096)},
		{"client-header-buffer-size", "128", true, func(c model.Config) any { return c.ClientHeaderBufferSize }, int64(128)},
		{"client-header-buffer-size", "64", false, func(c model.Config) any { return c.ClientHeaderBufferSize }, int64(1024)},
		{"client-header-buffer-size", "2m", false, func(c model.Config) any { return c.ClientHeaderBufferSize }, int64(1024)},
		{"large-client-header-buffers", "8 16k", true, func(c model.Config) any { return c.LargeClientHeaderBuffers }, model.HeaderBuffers{Count: 8, Size: 16 << 10}},
		{"large-client-header-buffers", "2\t1k", true, func(c model.Config) any { return c.LargeClientHeaderBuffers }, model.HeaderBuffers{Count: 2, Size: 1 << 10}},
		{"large-client-header-buffers", "4", false, func(c model.Config) any { return c.LargeClientHeaderBuffers }, def.LargeClientHeaderBuffers},
		{"large-client-header-buffers", "4 8k 2", false, func(c model.Config) any { return c.LargeClientHeaderBuffers }, def.LargeClientHeaderBuffers},
		{"large-client-header-buffers", "0 8k", false, func(c model.Config) any { return c.LargeClientHeaderBuffers }, def.LargeClientHeaderBuffers},
		{"large-client-header-buffers", "4 512", false, func(c model.Config) any { return c.LargeClientHeaderBuffers }, def.LargeClientHeaderBuffers},
		{"large-client-header-buffers", "4 8k;", false, func(c model.Config) any { return c.LargeClientHeaderBuffers }, def.LargeClientHeaderBuffers},
		{"client-header-timeout", "10", true, func(c model.Config) any { return c.ClientHeaderTimeout }, 10 * time.Second},
		{"client-header-timeout", "0", false, func(c model.Config) any { return c.ClientHeaderTimeout }, 60 * time.Second},
		{"client-body-timeout", "500ms", true, func(c model.Config) any { return c.ClientBodyTimeout }, 500 * time.Millisecond},
		{"client-body-timeout", "1M", false, func(c model.Config) any { return c.ClientBodyTimeout }, 60 * time.Second},
		{"http-redirect-code", "301", true, func(c model.Config) any { return c.HTTPRedirectCode }, 301},
		{"http-redirect-code", "302", true, func(c model.Config) any { return c.HTTPRedirectCode }, 302},
		{"http-redirect-code", "307", true, func(c model.Config) any { return c.HTTPRedirectCode }, 307},
		{"http-redirect-code", "303", false, func(c model.Config) any { return c.HTTPRedirectCode }, 308},
		{"http-redirect-code", "0308", false, func(c model.Config) any { return c.HTTPRedirectCode }, 308},
		{"server-tokens", "true", true, func(c model.Config) any { return c.ServerTokens }, true},
		{"server-tokens", "on", false, func(c model.Config) any { return c.ServerTokens }, false},
		{"generate-request-id", "false", true, func(c model.Config) any { return c.GenerateRequestID }, false},
		{"upstream-keepalive-timeout", "30", true, func(c model.Config) any { return c.UpstreamKeepaliveTimeout }, 30 * time.Second},
		{"upstream-keepalive-timeout", "0", false, func(c model.Config) any { return c.UpstreamKeepaliveTimeout }, 60 * time.Second},
		{"upstream-keepalive-requests", "100", true, func(c model.Config) any { return c.UpstreamKeepaliveRequests }, 100},
		{"upstream-keepalive-requests", "-1", false, func(c model.Config) any { return c.UpstreamKeepaliveRequests }, 10000},
		{"max-worker-connections", "65536", true, func(c model.Config) any { return c.WorkerConnections }, 65536},
		{"max-worker-connections", "0", true, func(c model.Config) any { return c.WorkerConnections }, 0},
		{"max-worker-connections", "10", false, func(c model.Config) any { return c.WorkerConnections }, 16384},
		{"max-worker-open-files", "0", true, func(c model.Config) any { return c.MaxWorkerOpenFiles }, 0},
		{"max-worker-open-files", "65535", true, func(c model.Config) any { return c.MaxWorkerOpenFiles }, 65535},
		{"max-worker-open-files", "100", false, func(c model.Config) any { return c.MaxWorkerOpenFiles }, 0},
		{"error-log-level", "warn", true, func(c model.Config) any { return c.ErrorLogLevel }, model.LogWarn},
		{"error-log-level", "debug", true, func(c model.Config) any { return c.ErrorLogLevel }, model.LogDebug},
		{"error-log-level", "WARN", false, func(c model.Config) any { return c.ErrorLogLevel }, model.LogNotice},
		{"error-log-level", "warning", false, func(c model.Config) any { return c.ErrorLogLevel }, model.LogNotice},
		{"error-log-level", "notice; daemon on", false, func(c model.Config) any { return c.ErrorLogLevel }, model.LogNotice},
	}
	for _, r := range rows {
		t.Run(r.key+"="+r.value, func(t *testing.T) {
			cfg, problems := parseOne(r.key, r.value)
			if got := len(problems) == 0; got != r.ok {
				t.Fatalf("accepted = %v (problems %v), want %v", got, problems, r.ok)
			}
			if got := r.get(cfg); !reflect.DeepEqual(got, r.want) {
				t.Fatalf("got %#v, want %#v", got, r.want)
			}
		})
	}
}

// TestWorkerConnectionsWins: when both names are set, Causeway's own key
// wins, whatever the order of the ConfigMap's data.
func TestWorkerConnectionsWins(t *testing.T) {
	cfg, problems := Parse(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "causeway", Name: "causeway"},
		Data: map[string]string{"worker-connections": "2048", "max-worker-connections": "4096"}})
	if len(problems) != 0 || cfg.WorkerConnections != 2048 {
		t.Fatalf("worker connections %d, problems %v; want 2048 from worker-connections", cfg.WorkerConnections, problems)
	}
}

// TestCompressionAndRequestKeysRefuseHostileValues sends the injection
// corpus to every key of the two areas: each value keeps the default.
func TestCompressionAndRequestKeysRefuseHostileValues(t *testing.T) {
	def := model.DefaultConfig()
	for _, area := range []keyParsers{compressionKeys, requestKeys} {
		for key := range area {
			for _, v := range testcorpus.Injection {
				cfg, problems := parseOne(key, v)
				if len(problems) == 0 {
					t.Errorf("%s: hostile value %q accepted", key, v)
				}
				if !reflect.DeepEqual(cfg, def) {
					t.Errorf("%s: hostile value %q changed the configuration", key, v)
				}
			}
		}
	}
}
