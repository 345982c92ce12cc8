package migrate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files and the generated sections of
// docs/migrating-from-ingress-nginx.md: go test ./internal/migrate -update
var update = flag.Bool("update", false, "rewrite golden files and generated documentation")

// testdataDir is a set of manifests written the way ingress-nginx users
// write them.
const testdataDir = "testdata/ingress-nginx"

// TestGolden checks the text and JSON reports for testdataDir.
func TestGolden(t *testing.T) {
	objs, err := FromDir(testdataDir)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(objs, Options{})
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"check.golden.txt", func(b *bytes.Buffer) error { return WriteText(b, r) }},
		{"check.golden.json", func(b *bytes.Buffer) error { return WriteJSON(b, r) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", tc.file), b.Bytes())
		})
	}
}

// compareGolden compares got with the file, or rewrites it with -update.
func compareGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/migrate -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test ./internal/migrate -update and review the diff):\n%s", file, got)
	}
}
