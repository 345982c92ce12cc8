package annotations

import (
	"fmt"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestRedirect(t *testing.T) {
	redirect := func(code int, url string) Result { return Result{Redirect: &model.Redirect{Code: code, URL: url}} }
	server := func(s ServerSettings, names ...string) Result {
		for _, n := range names {
			s.Keys = append(s.Keys, DefaultPrefix+"/"+n)
		}
		return Result{Server: s}
	}
	const url = "https://redirect.example.com/path?x=1"
	aliases := func(n int) (string, []string) {
		var in, out []string
		for i := range n {
			in = append(in, fmt.Sprintf("a%02d.example.com", i))
		}
		out = append(out, in...)
		return strings.Join(in, ","), out
	}
	list32, want32 := aliases(32)
	list33, _ := aliases(33)
	runCases(t, []annotationCase{
		// permanent-redirect and its code
		{name: "permanent-redirect", values: map[string]string{"permanent-redirect": "http://redirect.example.com"},
			want: redirect(301, "http://redirect.example.com")},
		{name: "permanent-redirect is normalized", values: map[string]string{"permanent-redirect": "HTTPS://Redirect.Example.COM:443/A?"},
			want: redirect(301, "https://redirect.example.com:443/A")},
		{name: "permanent-redirect with code 302", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "302"},
			want: redirect(302, url)},
		{name: "permanent-redirect with code 308", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "308"},
			want: redirect(308, url)},
		{name: "permanent-redirect-code 300 is not a redirect", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "300"},
			want: redirect(301, url), problems: []problem{invalid("permanent-redirect-code")}},
		{name: "permanent-redirect-code 304", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "304"},
			want: redirect(301, url), problems: []problem{invalid("permanent-redirect-code")}},
		{name: "permanent-redirect-code 309", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "309"},
			want: redirect(301, url), problems: []problem{invalid("permanent-redirect-code")}},
		{name: "permanent-redirect-code 0302 is 302, as Atoi reads it", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "0302"},
			want: redirect(302, url)},
		{name: "permanent-redirect-code 302.0", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "302.0"},
			want: redirect(301, url), problems: []problem{invalid("permanent-redirect-code")}},
		{name: "permanent-redirect-code +302", values: map[string]string{"permanent-redirect": url, "permanent-redirect-code": "+302"},
			want: redirect(301, url), problems: []problem{invalid("permanent-redirect-code")}},
		{name: "permanent-redirect-code alone", values: map[string]string{"permanent-redirect-code": "302"},
			problems: []problem{ignored("permanent-redirect-code")}},
		{name: "permanent-redirect relative", values: map[string]string{"permanent-redirect": "/x"},
			problems: []problem{invalid("permanent-redirect")}},
		{name: "permanent-redirect empty", values: map[string]string{"permanent-redirect": ""},
			problems: []problem{invalid("permanent-redirect")}},
		{name: "permanent-redirect ftp", values: map[string]string{"permanent-redirect": "ftp://a.example/"},
			problems: []problem{invalid("permanent-redirect")}},
		{name: "permanent-redirect of 2048 bytes", values: map[string]string{"permanent-redirect": "https://a.example/" + strings.Repeat("a", 2048-18)},
			want: redirect(301, "https://a.example/"+strings.Repeat("a", 2048-18))},
		{name: "permanent-redirect of 2049 bytes", values: map[string]string{"permanent-redirect": "https://a.example/" + strings.Repeat("a", 2049-18)},
			problems: []problem{invalid("permanent-redirect")}},

		// temporal-redirect
		{name: "temporal-redirect", values: map[string]string{"temporal-redirect": url}, want: redirect(302, url)},
		{name: "temporal-redirect with code 307", values: map[string]string{"temporal-redirect": url, "temporal-redirect-code": "307"},
			want: redirect(307, url)},
		{name: "temporal-redirect with code 301", values: map[string]string{"temporal-redirect": url, "temporal-redirect-code": "301"},
			want: redirect(301, url)},
		{name: "temporal-redirect-code 308 is permanent", values: map[string]string{"temporal-redirect": url, "temporal-redirect-code": "308"},
			want: redirect(302, url), problems: []problem{invalid("temporal-redirect-code")}},
		{name: "temporal-redirect-code 305", values: map[string]string{"temporal-redirect": url, "temporal-redirect-code": "305"},
			want: redirect(302, url), problems: []problem{invalid("temporal-redirect-code")}},
		{name: "temporal-redirect-code alone", values: map[string]string{"temporal-redirect-code": "307"},
			problems: []problem{ignored("temporal-redirect-code")}},
		{name: "temporal-redirect wins over permanent-redirect",
			values: map[string]string{"temporal-redirect": url, "permanent-redirect": "https://other.example/", "permanent-redirect-code": "308"},
			want:   redirect(302, url), problems: []problem{ignored("permanent-redirect")}},
		{name: "an invalid temporal-redirect leaves permanent-redirect",
			values: map[string]string{"temporal-redirect": "/relative", "permanent-redirect": url},
			want:   redirect(301, url), problems: []problem{invalid("temporal-redirect")}},

		// server-level booleans
		{name: "ssl-redirect false", values: map[string]string{"ssl-redirect": "false"},
			want: server(ServerSettings{SSLRedirect: new(false)}, "ssl-redirect")},
		{name: "ssl-redirect true", values: map[string]string{"ssl-redirect": "TRUE"},
			want: server(ServerSettings{SSLRedirect: new(true)}, "ssl-redirect")},
		{name: "ssl-redirect invalid", values: map[string]string{"ssl-redirect": "no"}, problems: []problem{invalid("ssl-redirect")}},
		{name: "force-ssl-redirect", values: map[string]string{"force-ssl-redirect": "true"},
			want: server(ServerSettings{ForceSSLRedirect: new(true)}, "force-ssl-redirect")},
		{name: "preserve-trailing-slash", values: map[string]string{"preserve-trailing-slash": "1"},
			want: server(ServerSettings{PreserveTrailingSlash: new(true)}, "preserve-trailing-slash")},
		{name: "from-to-www-redirect", values: map[string]string{"from-to-www-redirect": "true"},
			want: server(ServerSettings{WWWRedirect: new(true)}, "from-to-www-redirect")},
		{name: "from-to-www-redirect invalid", values: map[string]string{"from-to-www-redirect": "on"},
			problems: []problem{invalid("from-to-www-redirect")}},
		{name: "all server booleans, keys sorted",
			values: map[string]string{"ssl-redirect": "false", "force-ssl-redirect": "true", "preserve-trailing-slash": "true", "from-to-www-redirect": "false"},
			want: server(ServerSettings{SSLRedirect: new(false), ForceSSLRedirect: new(true), PreserveTrailingSlash: new(true), WWWRedirect: new(false)},
				"force-ssl-redirect", "from-to-www-redirect", "preserve-trailing-slash", "ssl-redirect")},

		// server-alias
		{name: "server-alias", values: map[string]string{"server-alias": "bar"},
			want: server(ServerSettings{Aliases: []string{"bar"}}, "server-alias")},
		{name: "server-alias list trimmed, sorted, deduplicated", values: map[string]string{"server-alias": " b.example.com,a.example.com ,,b.example.com,\t*.c.example.com"},
			want: server(ServerSettings{Aliases: []string{"*.c.example.com", "a.example.com", "b.example.com"}}, "server-alias")},
		{name: "server-alias 32 names", values: map[string]string{"server-alias": list32},
			want: server(ServerSettings{Aliases: want32}, "server-alias")},
		{name: "server-alias 33 names", values: map[string]string{"server-alias": list33}, problems: []problem{invalid("server-alias")}},
		{name: "server-alias empty", values: map[string]string{"server-alias": ""}, problems: []problem{invalid("server-alias")}},
		{name: "server-alias only commas", values: map[string]string{"server-alias": " , ,"}, problems: []problem{invalid("server-alias")}},
		{name: "server-alias upper case", values: map[string]string{"server-alias": "Bar.example.com"}, problems: []problem{invalid("server-alias")}},
		{name: "server-alias regex", values: map[string]string{"server-alias": "~^www\\d+\\.example\\.com$"}, problems: []problem{invalid("server-alias")}},
		{name: "server-alias IP address", values: map[string]string{"server-alias": "10.0.0.1"}, problems: []problem{invalid("server-alias")}},
		{name: "server-alias with a port", values: map[string]string{"server-alias": "a.example.com:80"}, problems: []problem{invalid("server-alias")}},
		{name: "server-alias one bad entry drops the list", values: map[string]string{"server-alias": "a.example.com,b_c"},
			problems: []problem{invalid("server-alias")}},
		{name: "server-alias separated by spaces", values: map[string]string{"server-alias": "a.example.com b.example.com"},
			problems: []problem{invalid("server-alias")}},
		{name: "server-alias name of 253 bytes", values: map[string]string{"server-alias": strings.Repeat("a.", 126) + "a"},
			want: server(ServerSettings{Aliases: []string{strings.Repeat("a.", 126) + "a"}}, "server-alias")},
		{name: "server-alias name of 255 bytes", values: map[string]string{"server-alias": strings.Repeat("a.", 127) + "a"},
			problems: []problem{invalid("server-alias")}},

		{name: "location and server settings together",
			values: map[string]string{"permanent-redirect": url, "ssl-redirect": "false", "server-alias": "www.example.com"},
			want: Result{Redirect: &model.Redirect{Code: 301, URL: url}, Server: ServerSettings{SSLRedirect: new(false), Aliases: []string{"www.example.com"},
				Keys: []string{DefaultPrefix + "/server-alias", DefaultPrefix + "/ssl-redirect"}}}},
	})
}

func TestRedirectHostile(t *testing.T) {
	const url = "https://a.example/"
	checkHostile(t, redirectGroup,
		hostileSetup{
			"permanent-redirect-code": {"permanent-redirect": url},
			"temporal-redirect-code":  {"temporal-redirect": url},
		},
		map[string][]string{
			"permanent-redirect": {"https://a.example/%s", "https://a.example/?q=%s", "https://%s.example/", "https://a.example:%s/"},
			"temporal-redirect":  {"https://a.example/%s", "https://a.example/?q=%s", "https://%s.example/"},
			"server-alias":       {"a.example.com,%s", "%s,a.example.com", "%s.example.com"},
		},
		map[string]map[string]string{
			"server-alias": {" x": "spaces around an item are trimmed, as in ingress-nginx; what is left is the DNS name x"},
		})
}
