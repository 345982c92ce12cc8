package runtime

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/causeway/causeway/internal/layout"
	"github.com/causeway/causeway/internal/model"
	"github.com/causeway/causeway/internal/render"
)

func TestSecretStoreModesAndRemoval(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	if err := prepareStateDir(dir, selfAccess(t)); err != nil {
		t.Fatal(err)
	}
	fs := fileSet{dir: dir, files: render.Files{}, access: selfAccess(t)}
	m := &model.Model{Secrets: []*model.TLSSecret{
		{Namespace: "a", Name: "one", PEM: []byte("pem-one")},
		{Namespace: "b", Name: "two.example", PEM: []byte("pem-two")},
	}, AuthFiles: []*model.AuthFile{{Namespace: "a", Name: "users", Map: true, Data: []byte("u:{SHA}x\n")}},
		ProxySecrets: []*model.ProxySecret{{Namespace: "c", Name: "client-ca", CA: []byte("ca"), CRL: []byte("crl")}},
		ProxyCAs:     []*model.ProxyCA{{Namespace: "c", Name: "client-ca", CA: []byte("configmap ca")}}}
	want := SecretFiles(m)
	want["nginx.conf"] = []byte("conf")
	if _, err := fs.sync(want); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  string
		mode os.FileMode
	}{
		{"secrets/a_one.pem", 0o600},
		{"secrets/b_two.example.pem", 0o600},
		{"secrets/a_users_authmap.htpasswd", 0o600},
		{"secrets/c_client-ca_ca.pem", 0o600},
		{"secrets/c_client-ca_crl.pem", 0o600},
		{"secrets/c_client-ca_configmap_ca.pem", 0o600},
		{"nginx.conf", 0o644},
		{"secrets", 0o700 | os.ModeDir},
	} {
		st, err := os.Stat(dir.Path(tc.rel))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != tc.mode {
			t.Errorf("%s: mode %v, want %v", tc.rel, st.Mode(), tc.mode)
		}
	}

	// A secret no longer referenced leaves the disk; nothing temporary is
	// left behind.
	m.Secrets, m.ProxySecrets, m.ProxyCAs = m.Secrets[:1], nil, nil
	m.AuthFiles = nil
	next := SecretFiles(m)
	next["nginx.conf"] = []byte("conf")
	if _, err := fs.sync(next); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"secrets/b_two.example.pem", "secrets/a_users_authmap.htpasswd", "secrets/c_client-ca_configmap_ca.pem"} {
		if _, err := os.Stat(dir.Path(gone)); !os.IsNotExist(err) {
			t.Fatalf("unreferenced %s still on disk: %v", gone, err)
		}
	}
	entries, _ := os.ReadDir(dir.Path("secrets"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "a_one.pem" {
		t.Fatalf("secrets dir holds %v, want only a_one.pem", names)
	}
}

func TestSyncReportsChangesAndKeepsUnchangedFiles(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	prepareStateDir(dir, selfAccess(t))
	fs := fileSet{dir: dir, files: render.Files{}, access: selfAccess(t)}
	files := render.Files{"nginx.conf": []byte("a"), "servers/x.conf": []byte("x")}
	if changed, err := fs.sync(files); err != nil || !changed {
		t.Fatalf("first sync: changed=%v err=%v", changed, err)
	}
	before, _ := os.Stat(dir.Path("servers/x.conf"))
	time.Sleep(10 * time.Millisecond)
	if changed, _ := fs.sync(render.Files{"nginx.conf": []byte("a"), "servers/x.conf": []byte("x")}); changed {
		t.Fatal("identical files must not count as a change")
	}
	after, _ := os.Stat(dir.Path("servers/x.conf"))
	if !before.ModTime().Equal(after.ModTime()) {
		t.Fatal("an unchanged file was rewritten")
	}
	if !fs.equal(files) {
		t.Fatal("equal must see identical sets")
	}
}

func TestPrepareStateDirRemovesStaleFiles(t *testing.T) {
	dir := layout.Dir(t.TempDir())
	prepareStateDir(dir, selfAccess(t))
	os.WriteFile(dir.Path("servers/stale.conf"), []byte("server {}"), 0o644)
	os.WriteFile(dir.Path("secrets/old_secret.pem"), []byte("x"), 0o600)
	if err := EnsureDefaultCert(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	def, _ := os.ReadFile(dir.DefaultCert())
	if err := prepareStateDir(dir, selfAccess(t)); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(dir.Path("servers/*")); len(m) != 0 {
		t.Fatalf("stale server files survived: %v", m)
	}
	if _, err := os.Stat(dir.Path("secrets/old_secret.pem")); !os.IsNotExist(err) {
		t.Fatal("stale secret survived")
	}
	// The default certificate is kept across restarts while valid.
	if err := EnsureDefaultCert(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(dir.DefaultCert())
	if string(def) != string(again) {
		t.Fatal("a valid default certificate was regenerated")
	}
	if st, _ := os.Stat(dir.DefaultCert()); st.Mode() != 0o600 {
		t.Fatalf("default certificate mode %v", st.Mode())
	}
}
