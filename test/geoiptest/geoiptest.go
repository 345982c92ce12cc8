// Package geoiptest writes small MaxMind databases for tests, shaped as
// MaxMind's editions are (country, city, ASN records), so that nginx's
// geoip2 module reads them as it reads the real ones.
package geoiptest

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Record is one network's data: nested maps, lists, strings and
// unsigned integers, as MaxMind's records hold them.
type Record map[string]any

// Write writes a database of type dbType ("GeoLite2-City", say) to path,
// each CIDR of records mapped to its record. Loopback and other reserved
// networks are allowed, so tests can look up 127.x clients.
func Write(t testing.TB, path, dbType string, records map[string]Record) {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, IncludeReservedNetworks: true, RecordSize: 28,
		Description: map[string]string{"en": "a test database"}})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, r := range records {
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := value(map[string]any(r))
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Insert(network, v); err != nil {
			t.Fatalf("insert %s: %v", cidr, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// City is a GeoLite2-City record: a country, a city and its first
// subdivision, with English names.
func City(countryISO, country, city, region string) Record {
	return Record{
		"country":      Record{"iso_code": countryISO, "names": Record{"en": country}, "geoname_id": uint32(1)},
		"city":         Record{"names": Record{"en": city}, "geoname_id": uint32(2)},
		"continent":    Record{"code": "EU", "names": Record{"en": "Europe"}, "geoname_id": uint32(3)},
		"subdivisions": []any{Record{"iso_code": region, "names": Record{"en": region}}},
		"location":     Record{"latitude": 48.85, "longitude": 2.35, "time_zone": "Europe/Paris"},
	}
}

// ASN is a GeoLite2-ASN record.
func ASN(number uint32, org string) Record {
	return Record{"autonomous_system_number": number, "autonomous_system_organization": org}
}

func value(v any) (mmdbtype.DataType, error) {
	switch v := v.(type) {
	case Record:
		return value(map[string]any(v))
	case map[string]any:
		m := mmdbtype.Map{}
		for k, x := range v {
			d, err := value(x)
			if err != nil {
				return nil, err
			}
			m[mmdbtype.String(k)] = d
		}
		return m, nil
	case []any:
		s := mmdbtype.Slice{}
		for _, x := range v {
			d, err := value(x)
			if err != nil {
				return nil, err
			}
			s = append(s, d)
		}
		return s, nil
	case string:
		return mmdbtype.String(v), nil
	case uint32:
		return mmdbtype.Uint32(v), nil
	case float64:
		return mmdbtype.Float64(v), nil
	case bool:
		return mmdbtype.Bool(v), nil
	}
	return nil, fmt.Errorf("no MaxMind type for %T", v)
}
