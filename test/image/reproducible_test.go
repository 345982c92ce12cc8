package image

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestImageReproducible builds the image twice from scratch, each with its
// own empty cache (so mmdebstrap makes the root filesystem anew both times,
// and nothing cached can hide a difference), and wants the same manifest
// digest. Both builds use the same version strings and the same Go build
// cache: the Go toolchain's own reproducibility is not what this checks.
// It needs Debian's mirror, as make image does.
func TestImageReproducible(t *testing.T) {
	require(t, false)
	var infos []archiveInfo
	var packages [][]byte
	for _, run := range []string{"a", "b"} {
		dir := t.TempDir()
		out := filepath.Join(dir, "image.tar")
		cmd := exec.Command("../../hack/build-image.sh")
		cmd.Env = append(os.Environ(), "FORCE=1", "VERSION=reproducible", "COMMIT=0000000000000000000000000000000000000000",
			"CAUSEWAY_IMAGE_CACHE="+filepath.Join(dir, "cache"), "CAUSEWAY_IMAGE_OUT="+out)
		if log, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", run, err, log)
		}
		info, err := readArchive(out)
		if err != nil {
			t.Fatal(err)
		}
		list, err := os.ReadFile(filepath.Join(dir, "cache", "packages.txt"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("build %s: manifest %s, %d bytes of blobs", run, info.Manifest, info.Blobs)
		infos = append(infos, info)
		packages = append(packages, list)
	}
	if !bytes.Equal(packages[0], packages[1]) {
		t.Fatalf("Debian's mirror changed between the two builds (the installed packages differ); run the test again:\n%s\n---\n%s", packages[0], packages[1])
	}
	if infos[0].Manifest != infos[1].Manifest {
		t.Errorf("two builds of the same inputs: manifests %s and %s, want the same digest", infos[0].Manifest, infos[1].Manifest)
	}
}
