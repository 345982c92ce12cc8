package annotations

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// defaultCORS is what enable-cors: "true" alone gives: ingress-nginx's
// defaults.
func defaultCORS() *model.CORS {
	return &model.CORS{
		AllowAnyOrigin: true,
		Methods:        []string{"GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"},
		Headers: []string{"DNT", "Keep-Alive", "User-Agent", "X-Requested-With", "If-Modified-Since",
			"Cache-Control", "Content-Type", "Range", "Authorization"},
		Credentials: true,
		MaxAge:      1728000 * time.Second,
	}
}

// cors returns defaultCORS changed by edit.
func cors(edit func(c *model.CORS)) *model.CORS {
	c := defaultCORS()
	edit(c)
	return c
}

func TestCORS(t *testing.T) {
	on := func(kv ...string) map[string]string {
		m := map[string]string{"enable-cors": "true"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		want     *model.CORS
		problems []problem
	}{
		// enable-cors
		{"enabled alone: the defaults", on(), defaultCORS(), nil},
		{"enabled, any case", map[string]string{"enable-cors": "TRUE"}, defaultCORS(), nil},
		{"enabled as 1", map[string]string{"enable-cors": "1"}, defaultCORS(), nil},
		{"disabled", map[string]string{"enable-cors": "false"}, nil, nil},
		{"enable-cors invalid", map[string]string{"enable-cors": "yes"}, nil, []problem{invalid("enable-cors")}},
		{"options without enable-cors are ignored", map[string]string{"cors-allow-origin": "https://a.com", "cors-max-age": "5"}, nil,
			[]problem{ignored("cors-allow-origin"), ignored("cors-max-age")}},
		{"options with enable-cors false are ignored", map[string]string{"enable-cors": "false", "cors-allow-methods": "GET"}, nil,
			[]problem{ignored("cors-allow-methods")}},

		// cors-allow-origin
		{"one origin", on("cors-allow-origin", "https://origin.cors.com:8080"),
			cors(func(c *model.CORS) { c.AllowAnyOrigin, c.Origins = false, []string{"https://origin.cors.com:8080"} }), nil},
		{"several origins, spaces, a wildcard label", on("cors-allow-origin", "http://origin2.cors.com, https://*.Example.com ,https://origin.com:443"),
			cors(func(c *model.CORS) {
				c.AllowAnyOrigin, c.Origins = false, []string{"http://origin2.cors.com", "https://*.example.com", "https://origin.com"}
			}), nil},
		{"star", on("cors-allow-origin", "*"), defaultCORS(), nil},
		{"star with others is refused, CORS stays off", on("cors-allow-origin", "*, https://foo.bar.com"), nil, []problem{invalid("cors-allow-origin")}},
		{"origin without scheme: CORS stays off", on("cors-allow-origin", "origin.cors.com:8080"), nil, []problem{invalid("cors-allow-origin")}},
		{"origin with a path: CORS stays off", on("cors-allow-origin", "https://a.com/"), nil, []problem{invalid("cors-allow-origin")}},
		{"trailing comma refused", on("cors-allow-origin", "https://a.com,"), nil, []problem{invalid("cors-allow-origin")}},
		{"null refused", on("cors-allow-origin", "null"), nil, []problem{invalid("cors-allow-origin")}},
		{"65 origins refused", on("cors-allow-origin", strings.Repeat("https://a.com,", 64)+"https://a.com"), nil, []problem{invalid("cors-allow-origin")}},

		// cors-allow-methods
		{"methods", on("cors-allow-methods", "get, POST,put"), cors(func(c *model.CORS) { c.Methods = []string{"GET", "POST", "PUT"} }), nil},
		{"methods with spaces only", on("cors-allow-methods", "HEAD TRACE CONNECT"), cors(func(c *model.CORS) { c.Methods = []string{"HEAD", "TRACE", "CONNECT"} }), nil},
		{"duplicate methods", on("cors-allow-methods", "GET,GET"), cors(func(c *model.CORS) { c.Methods = []string{"GET"} }), nil},
		{"unknown method keeps the default", on("cors-allow-methods", "GET, PURGE"), defaultCORS(), []problem{invalid("cors-allow-methods")}},
		{"empty methods keeps the default", on("cors-allow-methods", ""), defaultCORS(), []problem{invalid("cors-allow-methods")}},

		// cors-allow-headers and cors-expose-headers
		{"headers", on("cors-allow-headers", "X-Forwarded-For, X-app123-XPTO"),
			cors(func(c *model.CORS) { c.Headers = []string{"X-Forwarded-For", "X-app123-XPTO"} }), nil},
		{"headers star", on("cors-allow-headers", "*"), cors(func(c *model.CORS) { c.Headers = []string{"*"} }), nil},
		{"headers case duplicates", on("cors-allow-headers", "X-A, x-a"), cors(func(c *model.CORS) { c.Headers = []string{"X-A"} }), nil},
		{"header with a colon keeps the default", on("cors-allow-headers", "X-A: 1"), defaultCORS(), []problem{invalid("cors-allow-headers")}},
		{"65 headers keep the default", on("cors-allow-headers", strings.Repeat("X-A,", 64)+"X-A"), defaultCORS(), []problem{invalid("cors-allow-headers")}},
		{"expose headers", on("cors-expose-headers", "X-CustomResponseHeader, X-Total"),
			cors(func(c *model.CORS) { c.ExposeHeaders = []string{"X-CustomResponseHeader", "X-Total"} }), nil},
		{"expose star", on("cors-expose-headers", "*"), cors(func(c *model.CORS) { c.ExposeHeaders = []string{"*"} }), nil},
		{"expose empty item", on("cors-expose-headers", "X-A,,X-B"), defaultCORS(), []problem{invalid("cors-expose-headers")}},

		// cors-allow-credentials
		{"credentials false", on("cors-allow-credentials", "false"), cors(func(c *model.CORS) { c.Credentials = false }), nil},
		{"credentials invalid keeps true", on("cors-allow-credentials", "no"), defaultCORS(), []problem{invalid("cors-allow-credentials")}},

		// cors-max-age
		{"max-age", on("cors-max-age", "600"), cors(func(c *model.CORS) { c.MaxAge = 600 * time.Second }), nil},
		{"max-age 0", on("cors-max-age", "0"), cors(func(c *model.CORS) { c.MaxAge = 0 }), nil},
		{"max-age a year", on("cors-max-age", "31536000"), cors(func(c *model.CORS) { c.MaxAge = 31536000 * time.Second }), nil},
		{"max-age over a year", on("cors-max-age", "31536001"), defaultCORS(), []problem{invalid("cors-max-age")}},
		{"max-age negative", on("cors-max-age", "-1"), defaultCORS(), []problem{invalid("cors-max-age")}},
		{"max-age with a unit", on("cors-max-age", "10s"), defaultCORS(), []problem{invalid("cors-max-age")}},
		{"max-age overflow", on("cors-max-age", "99999999999999999999"), defaultCORS(), []problem{invalid("cors-max-age")}},

		{"every option at once", on("cors-allow-origin", "https://a.com", "cors-allow-methods", "GET", "cors-allow-headers", "X-A",
			"cors-expose-headers", "X-B", "cors-allow-credentials", "false", "cors-max-age", "60"),
			&model.CORS{Origins: []string{"https://a.com"}, Methods: []string{"GET"}, Headers: []string{"X-A"},
				ExposeHeaders: []string{"X-B"}, MaxAge: time.Minute}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Location.CORS, tc.want) {
				t.Fatalf("CORS = %+v, want %+v", res.Location.CORS, tc.want)
			}
		})
	}
}
