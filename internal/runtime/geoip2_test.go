package runtime

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/causeway/causeway/internal/render"
	"github.com/causeway/causeway/test/geoiptest"
)

// TestFindGeoIP2Databases: the editions asked for whose <edition>.mmdb
// is a MaxMind database, in the order asked; missing files, directories
// and other files are left out with a reason each.
func TestFindGeoIP2Databases(t *testing.T) {
	dir := t.TempDir()
	geoiptest.Write(t, filepath.Join(dir, "GeoLite2-City.mmdb"), "GeoLite2-City",
		map[string]geoiptest.Record{"127.0.0.0/8": geoiptest.City("FR", "France", "Paris", "IDF")})
	geoiptest.Write(t, filepath.Join(dir, "GeoLite2-ASN.mmdb"), "GeoLite2-ASN", map[string]geoiptest.Record{"127.0.0.0/8": geoiptest.ASN(64500, "Example")})
	os.WriteFile(filepath.Join(dir, "GeoIP2-ISP.mmdb"), []byte("not a database"), 0o644)
	os.Mkdir(filepath.Join(dir, "GeoIP2-City.mmdb"), 0o755)
	got, errs := FindGeoIP2Databases(dir, []string{"GeoLite2-ASN", "GeoIP2-ISP", "GeoLite2-City", "GeoIP2-City", "GeoLite2-Country"})
	want := []render.GeoIP2Database{{Edition: "GeoLite2-ASN", Path: filepath.Join(dir, "GeoLite2-ASN.mmdb")},
		{Edition: "GeoLite2-City", Path: filepath.Join(dir, "GeoLite2-City.mmdb")}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("found %+v, want %+v", got, want)
	}
	if len(errs) != 3 {
		t.Fatalf("reasons %v, want three (not a database, a directory, missing)", errs)
	}
}
