package runtime

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/causeway/causeway/internal/render"
)

// GeoIP2Module is the file of nginx's geoip2 module (Debian's
// libnginx-mod-http-geoip2), which use-geoip2 needs.
const GeoIP2Module = "ngx_http_geoip2_module.so"

// mmdbMarker starts a MaxMind database's metadata, within its last 128
// KiB.
var mmdbMarker = []byte("\xab\xcd\xefMaxMind.com")

// FindGeoIP2Databases returns the databases "<edition>.mmdb" of dir for
// the editions asked for, in their order, and why each one missing or
// unusable was left out. A file is used when it is a regular file that
// holds a MaxMind database's metadata; nginx checks the rest when it
// loads it.
func FindGeoIP2Databases(dir string, editions []string) ([]render.GeoIP2Database, []error) {
	var out []render.GeoIP2Database
	var errs []error
	for _, e := range editions {
		p := filepath.Join(dir, e+".mmdb")
		if err := checkMMDB(p); err != nil {
			errs = append(errs, fmt.Errorf("GeoIP2 edition %s: %w", e, err))
			continue
		}
		out = append(out, render.GeoIP2Database{Edition: e, Path: p})
	}
	return out, errs
}

func checkMMDB(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	tail := min(st.Size(), 128<<10)
	buf := make([]byte, tail)
	if _, err := f.ReadAt(buf, st.Size()-tail); err != nil && err != io.EOF {
		return err
	}
	if !bytes.Contains(buf, mmdbMarker) {
		return fmt.Errorf("%s is not a MaxMind database (no metadata)", path)
	}
	return nil
}
