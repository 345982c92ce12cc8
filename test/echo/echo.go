// Package echo is a tiny HTTP backend that answers every request with JSON
// naming the service and endpoint that served it. The demo runs it as a
// process; integration tests run it in-process.
package echo

import (
	"encoding/json"
	"net/http"
	"time"
)

// Reply is what the backend answers.
type Reply struct {
	Service        string `json:"service"`
	Endpoint       string `json:"endpoint"`
	Host           string `json:"host"`
	Path           string `json:"path"`
	Method         string `json:"method"`
	ForwardedFor   string `json:"x_forwarded_for,omitempty"`
	ForwardedProto string `json:"x_forwarded_proto,omitempty"`
}

// Handler answers as service, reporting endpoint (its own address).
func Handler(service, endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ?sleep=200ms holds the response, to test in-flight requests.
		if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil && d > 0 && d <= 10*time.Second {
			time.Sleep(d)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo-Endpoint", endpoint)
		json.NewEncoder(w).Encode(Reply{
			Service:        service,
			Endpoint:       endpoint,
			Host:           r.Host,
			Path:           r.URL.Path,
			Method:         r.Method,
			ForwardedFor:   r.Header.Get("X-Forwarded-For"),
			ForwardedProto: r.Header.Get("X-Forwarded-Proto"),
		})
	})
}
