package certs

import (
	"os"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

// TestKeyPairRotation: a rewritten pair is picked up on the next Get, and
// a broken rewrite keeps the previous pair instead of failing handshakes.
func TestKeyPairRotation(t *testing.T) {
	ca, err := tunneltest.NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, _ := ca.Issue("system:node:a", false, nil, nil, time.Hour)
	certFile, keyFile, err := first.WriteFiles(dir, "agent")
	if err != nil {
		t.Fatal(err)
	}
	kp, err := NewKeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	serial := func() string {
		c, err := kp.Get()
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.SerialNumber.String()
	}
	s1 := serial()
	if s1 != serial() {
		t.Fatal("unchanged files reloaded to a different certificate")
	}
	second, _ := ca.Issue("system:node:a", false, nil, nil, time.Hour)
	second.WriteFiles(dir, "agent")
	future := time.Now().Add(time.Minute) // mtime granularity
	os.Chtimes(certFile, future, future)
	os.Chtimes(keyFile, future, future)
	s2 := serial()
	if s2 == s1 {
		t.Fatal("rotated files not picked up")
	}
	os.WriteFile(certFile, []byte("garbage"), 0o600)
	later := future.Add(time.Minute)
	os.Chtimes(certFile, later, later)
	if got := serial(); got != s2 {
		t.Fatalf("broken rewrite replaced the pair: %s", got)
	}
	if _, err := NewKeyPair(certFile, keyFile); err == nil {
		t.Fatal("NewKeyPair accepted a broken certificate")
	}
	if _, err := LoadPool(keyFile); err == nil {
		t.Fatal("LoadPool accepted a key file")
	}
}
