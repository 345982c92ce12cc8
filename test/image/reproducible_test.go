package image

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestImageReproducible wants two independent builds of the same inputs to
// give the same manifest digest. Build a makes the root filesystem anew
// with mmdebstrap, in an empty cache of its own, so nothing cached can hide
// a difference. Build b takes the machine's cached root filesystem
// (.cache/image, which make image made with mmdebstrap from scratch too,
// earlier in this run or in an earlier one, from the same recipe as its
// stamp says; build-image.sh makes it again when the stamp does not match).
// So the two root filesystems come from two mmdebstrap runs, as when both
// were made here, at half the cost. When the mirror has changed since the
// cached one was made (the package lists differ), b is made from scratch
// too. Both builds use the same version strings and the same Go build
// cache: the Go toolchain's own reproducibility is not what this checks.
// It needs Debian's mirror, as make image does.
func TestImageReproducible(t *testing.T) {
	require(t, false)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	build := func(name, cache string) (archiveInfo, []byte) {
		t.Helper()
		dir := t.TempDir()
		out := filepath.Join(dir, "image.tar")
		env := []string{"VERSION=reproducible", "COMMIT=0000000000000000000000000000000000000000", "CAUSEWAY_IMAGE_OUT=" + out}
		if cache == "" {
			cache = filepath.Join(dir, "cache")
			env = append(env, "FORCE=1")
		}
		env = append(env, "CAUSEWAY_IMAGE_CACHE="+cache)
		cmd := exec.Command(filepath.Join(root, "hack", "build-image.sh"))
		cmd.Env = append(os.Environ(), env...)
		if log, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, log)
		}
		info, err := readArchive(out)
		if err != nil {
			t.Fatal(err)
		}
		list, err := os.ReadFile(filepath.Join(cache, "packages.txt"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("build %s: manifest %s, %d bytes of blobs", name, info.Manifest, info.Blobs)
		return info, list
	}
	a, listA := build("a (mmdebstrap now)", "")
	b, listB := build("b (the machine's cached root filesystem)", filepath.Join(root, ".cache", "image"))
	if !bytes.Equal(listA, listB) {
		t.Logf("Debian's mirror changed since the cached root filesystem was made; making b from scratch too")
		b, listB = build("b (mmdebstrap now)", "")
		if !bytes.Equal(listA, listB) {
			t.Fatalf("Debian's mirror changed between the two builds (the installed packages differ); run the test again:\n%s\n---\n%s", listA, listB)
		}
	}
	if a.Manifest != b.Manifest {
		t.Errorf("two builds of the same inputs: manifests %s and %s, want the same digest", a.Manifest, b.Manifest)
	}
}
