package integration

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"
)

// ticketSecretYAML is the Secret causeway/tickets with the given keys.
func ticketSecretYAML(current, previous []byte) string {
	s := "apiVersion: v1\nkind: Secret\nmetadata: {name: tickets, namespace: causeway}\ndata:\n" +
		"  tickets.key: " + base64.StdEncoding.EncodeToString(current) + "\n"
	if previous != nil {
		s += "  tickets.previous.key: " + base64.StdEncoding.EncodeToString(previous) + "\n"
	}
	return s + "---\n"
}

// session makes one HTTPS request to c with cfg (whose session cache
// carries tickets between calls) and reports whether it resumed. Reading
// the response also reads TLS 1.3's NewSessionTicket.
func (c *controller) session(host string, cfg *tls.Config) (bool, error) {
	conn, err := tls.Dial("tcp", net.JoinHostPort(c.IP, strconv.Itoa(c.HTTPSPort)), cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
	buf := make([]byte, 4096)
	for {
		if _, err := conn.Read(buf); err != nil {
			break
		}
	}
	return conn.ConnectionState().DidResume, nil
}

// TestSessionTicketKeyShared: an nginx started afresh with the ticket key
// of the Secret resumes the TLS sessions of the one before it, as a
// replica resumes another's (nginx makes a random key at each start
// otherwise); a rotated key keeps accepting tickets of the previous one
// while it is tickets.previous.key, and not after. nginx also ties a
// session to the default server's certificate paths (docs/configuration.md):
// a restart keeps them, as replicas with one --state-dir share them.
func TestSessionTicketKeyShared(t *testing.T) {
	t.Parallel()
	web := startBackend(t, "web")
	k1, k2 := bytes.Repeat([]byte{1}, 80), bytes.Repeat([]byte{2}, 80)
	a := startController(t, map[string]string{
		"app.yaml": ingressClass + serviceYAML("default", "web", 80, web) + tlsSecretYAML(t, "default", "a-tls", "a.tls.test", 0) +
			tlsIngressYAML("default", "a", "a.tls.test", "a-tls", "web"),
		"config.yaml":  configMapYAML(map[string]string{"ssl-session-tickets": "true", "ssl-session-ticket-key-secret": "causeway/tickets"}),
		"tickets.yaml": ticketSecretYAML(k1, nil),
	})
	client := func() *tls.Config {
		return &tls.Config{ServerName: "a.tls.test", InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	}
	ticket := func(c *controller) *tls.Config {
		cfg := client()
		if r, err := c.session("a.tls.test", cfg); err != nil || r {
			t.Fatalf("first session: resumed %v, %v", r, err)
		}
		return cfg
	}
	fromA := ticket(a)
	a.Stop()
	b := launchController(t, nil, launch{after: a})
	b.WaitReady(15 * time.Second)
	if r, err := b.session("a.tls.test", fromA); err != nil || !r {
		t.Fatalf("a new nginx did not resume the old one's session with the shared key: %v, %v", r, err)
	}

	// b rotates to k2, keeping k1 as the previous key.
	early := ticket(b)
	rotate := func(current, previous []byte) {
		reloads := b.Metric("causeway_nginx_reloads_total")
		b.WriteManifest("tickets.yaml", ticketSecretYAML(current, previous))
		eventually(t, 10*time.Second, func() error {
			if b.Metric("causeway_nginx_reloads_total") == reloads {
				return fmt.Errorf("no reload for the new key")
			}
			return nil
		})
	}
	rotate(k2, k1)
	if r, err := b.session("a.tls.test", early); err != nil || !r {
		t.Fatalf("a k1 ticket did not resume while k1 is the previous key: %v, %v", r, err)
	}
	early = ticket(b) // made with k2
	rotate(k1, nil)
	// Eventually: just after the reload a handshake may still reach an
	// old worker, which holds k2 until it exits.
	eventually(t, 10*time.Second, func() error {
		if r, err := b.session("a.tls.test", early); err != nil || r {
			return fmt.Errorf("a k2 ticket resumed after k2 was dropped: %v, %v", r, err)
		}
		return nil
	})
}
