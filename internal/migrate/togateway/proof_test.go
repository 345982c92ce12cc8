package togateway_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/migrate/equivalence"
	"github.com/causeway/causeway/internal/migrate/togateway"
)

// TestProofGolden proves each case of testdata (what `causeway migrate
// to-gateway` reports) and compares the text report, the proof included,
// with NAME.proof.
func TestProofGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			in, opts := togateway.ReadCase(t, file)
			out, rep := togateway.Convert(in, opts)
			equivalence.Check(in, opts, out, &rep, nil)
			var b bytes.Buffer
			if err := togateway.WriteText(&b, rep); err != nil {
				t.Fatal(err)
			}
			togateway.CompareGolden(t, strings.TrimSuffix(file, ".yaml")+".proof", b.Bytes())
		})
	}
}
